"""``experts-amplification``: RW-FTPL vs RW-AdaBatch (paper 000, Sec. 4) -- regret, batch sizes
and the privacy amplification of adaptive batching.

Three parts:

1. Regret vs T on a static environment (iid Bernoulli gains, one best expert by ``gap``) for
   every mu, RW-FTPL and RW-AdaBatch with common random numbers (the same key, hence the same
   noise), against the bounds (eta + 2/eta) sqrt(2 T log n) and (1 + alpha/2) times it. The
   table checks that AdaBatch stays within its bound and within a factor 1 + alpha/2 of
   RW-FTPL's regret up to sampling error (3 standard errors of the paired difference).
2. Batch sizes over rounds (RW-AdaBatch's ``batch_size`` output) on the worst case (all gains
   tied, :func:`~ldpjax.experts.equal_gains`) and on easy environments with a clear best
   expert: batches grow with the gap ("amplification is stronger when data is easy"). The
   analytic worst-case law of :mod:`ldpjax.experts.amplification` is drawn for comparison.
3. Privacy of round t: the analytic worst-case amplification vs the Monte Carlo estimate from
   simulated runs (empirical law of the batch containing round t, same mixture formulas), as
   tradeoff curves and as delta(eps), for every (n, t); the un-amplified mu-GDP curve is the
   reference. The table reports delta at a few eps (with the Monte Carlo standard error) and
   eps at delta = 1e-5, and the largest amount (in standard errors) by which the analytic
   delta falls below the Monte Carlo one (it should never be more than sampling noise).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from ldpjax.accounting import gdp_delta, gdp_epsilon, gdp_tradeoff
from ldpjax.engine import product_grid, record
from ldpjax.experiments.base import (
    Experiment,
    ExperimentResult,
    Option,
    RunContext,
    floats,
    ints,
)
from ldpjax.experts import (
    AdaBatchConfig,
    FTPLConfig,
    adabatch_params,
    batch_mixture_delta,
    batch_mixture_delta_se,
    batch_mixture_tradeoff,
    bernoulli_gains,
    best_in_hindsight,
    empirical_batch_distribution,
    equal_gains,
    ftpl_params,
    regret_bound_adabatch,
    regret_bound_ftpl,
    rw_adabatch,
    rw_ftpl,
    worst_case_batch_distribution,
    worst_case_batch_sizes,
)
from ldpjax.plotting import PALETTE, figure

TAG = "experts-amplification-v1"


def _log_grid(first: int, last: int, count: int) -> list[int]:
    return sorted({int(round(x)) for x in np.geomspace(first, last, count)} | {last})


# --------------------------------------------------------------------------- part 1: regret
def _regret_part(ctx: RunContext, mus, n, horizon, gap, alpha):
    gains = bernoulli_gains(ctx.key_for("static-environment"), horizon, n, gap)
    checkpoints = _log_grid(min(100, horizon), horizon, 8)
    earned = record.at_steps(checkpoints, lambda out: out.gain, cumulative=True)
    key = ctx.key_for("regret-noise")  # the same noise for both algorithms
    ftpl = ctx.simulate(
        rw_ftpl(FTPLConfig(n)),
        product_grid(ftpl_params(1.0), mu=list(mus)),
        horizon,
        inputs=gains,
        grid_ndim=1,
        record=earned,
        key=key,
        label="regret-rw-ftpl",
        keep_state=False,
        tag=TAG,
    ).record
    ada = ctx.simulate(
        rw_adabatch(AdaBatchConfig(n)),
        product_grid(adabatch_params(1.0, alpha), mu=list(mus)),
        horizon,
        inputs=gains,
        grid_ndim=1,
        key=key,
        label="regret-rw-adabatch",
        record=record.combine(
            earned=earned, batches=record.total(lambda out: out.batch_start.astype(jnp.int32))
        ),
        keep_state=False,
        tag=TAG,
    ).record
    best = np.asarray(best_in_hindsight(gains, checkpoints), np.float64)
    regret_ftpl = best - np.asarray(ftpl, np.float64)  # (mu, seed, checkpoint)
    regret_ada = best - np.asarray(ada["earned"], np.float64)
    seeds = regret_ftpl.shape[1]
    rows = []
    for i, mu in enumerate(mus):
        for j, t in enumerate(checkpoints):
            rf, ra = regret_ftpl[i, :, j], regret_ada[i, :, j]
            excess = ra - (1 + alpha / 2) * rf  # paired (common random numbers)
            se_excess = excess.std(ddof=1) / math.sqrt(seeds)
            bound_f = float(regret_bound_ftpl(mu, t, n))
            bound_a = float(regret_bound_adabatch(mu, t, n, alpha))
            rows.append(
                {
                    "mu": mu,
                    "T": t,
                    "regret_ftpl": rf.mean(),
                    "se_ftpl": rf.std(ddof=1) / math.sqrt(seeds),
                    "bound_ftpl": bound_f,
                    "regret_adabatch": ra.mean(),
                    "se_adabatch": ra.std(ddof=1) / math.sqrt(seeds),
                    "bound_adabatch": bound_a,
                    "ratio_adabatch_ftpl": ra.mean() / rf.mean() if rf.mean() > 0 else float("nan"),
                    "adabatch_within_bound": bool(
                        ra.mean() <= bound_a + 3 * ra.std(ddof=1) / math.sqrt(seeds)
                    ),
                    "adabatch_within_factor": bool(excess.mean() <= 3 * se_excess),
                    "mean_batch_length": horizon / float(np.mean(ada["batches"][i]))
                    if t == horizon
                    else None,
                }
            )
    fig, axes = figure(len(mus), 1, width=3.8)
    for i, mu in enumerate(mus):
        ax = axes[0, i]
        sel = [r for r in rows if r["mu"] == mu]
        ts = [r["T"] for r in sel]
        ax.plot(ts, [r["regret_ftpl"] for r in sel], "o-", color=PALETTE[0], label="RW-FTPL")
        ax.plot(
            ts,
            [r["regret_adabatch"] for r in sel],
            "s--",
            color=PALETTE[1],
            label="RW-AdaBatch",
            markerfacecolor="none",
        )
        ax.plot(ts, [r["bound_ftpl"] for r in sel], ":", color=PALETTE[0], label="FTPL bound")
        ax.plot(
            ts,
            [r["bound_adabatch"] for r in sel],
            "-.",
            color=PALETTE[1],
            lw=0.8,
            label="AdaBatch bound",
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("T (rounds)")
        ax.set_title(f"mu = {mu:g}, n = {n}, gap = {gap:g}")
        if i == 0:
            ax.set_ylabel("mean static regret")
            ax.legend(fontsize=7)
    return rows, fig


# --------------------------------------------------------------------------- part 2: batches
def _batch_part(ctx: RunContext, n, horizon, gaps, alpha, mu, runs):
    rounds = _log_grid(10, horizon, 10)
    algo = rw_adabatch(AdaBatchConfig(n))
    params = adabatch_params(mu, alpha)
    sizes_rec = record.at_steps(rounds, lambda out: out.batch_size)
    envs = [("tied (worst case)", 0.0, equal_gains(ctx.key_for("tied-environment"), horizon, n))]
    for gap in gaps:
        envs.append(
            (f"gap {gap:g}", gap, bernoulli_gains(ctx.key_for(f"easy-{gap}"), horizon, n, gap))
        )
    rows, curves = [], {}
    grid, analytic_weights = worst_case_batch_distribution(jnp.asarray(rounds, float), n, alpha)
    analytic_cdf = np.cumsum(np.asarray(analytic_weights, np.float64), axis=-1)
    analytic_median = [float(np.asarray(grid)[np.searchsorted(c, 0.5)]) for c in analytic_cdf]
    for name, gap, gains in envs:
        sizes = ctx.simulate(
            algo,
            params,
            horizon,
            inputs=gains,
            record=sizes_rec,
            num_seeds=runs,
            key=ctx.key_for("batch-noise"),
            label=f"batches-{name}",
            keep_state=False,
            tag=TAG,
        ).record
        sizes = np.asarray(sizes, np.float64)  # (runs, rounds)
        curves[name] = sizes
        for j, t in enumerate(rounds):
            col = sizes[:, j]
            rows.append(
                {
                    "environment": name,
                    "gap": gap,
                    "mu": mu,
                    "t": t,
                    "mean_batch": col.mean(),
                    "median_batch": float(np.median(col)),
                    "q10": float(np.quantile(col, 0.1)),
                    "q90": float(np.quantile(col, 0.9)),
                    "analytic_worst_case_median": analytic_median[j] if gap == 0.0 else None,
                }
            )
    fig, axes = figure(1, 1, width=5.0, height=3.6)
    ax = axes[0, 0]
    for k, (name, _, _) in enumerate(envs):
        sizes = curves[name]
        color = PALETTE[k % len(PALETTE)]
        ax.plot(rounds, np.median(sizes, 0), "o-", color=color, label=f"{name}: median")
        ax.fill_between(
            rounds, np.quantile(sizes, 0.1, 0), np.quantile(sizes, 0.9, 0), color=color, alpha=0.15
        )
    ax.plot(rounds, analytic_median, "k:", label="analytic worst case: median")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("size of the batch containing t")
    ax.set_title(f"RW-AdaBatch batch sizes (n = {n}, mu = {mu:g}, alpha = {alpha:g}; 10-90% band)")
    ax.legend(fontsize=7)
    final = {name: float(np.mean(curves[name][:, -1])) for name, _, _ in envs}
    values = list(final.values())
    grows = all(a < b for a, b in zip(values[:-1], values[1:], strict=True))
    return rows, fig, final, grows


# --------------------------------------------------------------------------- part 3: privacy
def _epsilon_at(deltas: np.ndarray, eps: np.ndarray, target: float) -> float:
    """Smallest eps on the grid with delta(eps) <= target (inf if none)."""
    below = np.flatnonzero(deltas <= target)
    return float(eps[below[0]]) if below.size else float("inf")


def _privacy_part(ctx: RunContext, mus, experts, rounds, alpha, mu_plot, runs):
    eps_fine = np.linspace(0.0, 12.0, 1201)
    eps_show = (0.5, 1.0, 2.0)
    fpr = np.geomspace(1e-5, 1.0, 60)
    rows = []
    fig_t, axes_t = figure(len(rounds), len(experts), width=3.4, height=3.0)
    fig_d, axes_d = figure(len(rounds), len(experts), width=3.4, height=3.0)
    mus_j = jnp.asarray(mus, float)[:, None]
    worst_gap = 0.0
    bar = ctx.progress(len(experts), "privacy (Monte Carlo)")
    with bar:
        for a, n in enumerate(experts):
            simulated = np.asarray(
                worst_case_batch_sizes(
                    ctx.key_for(f"privacy-mc-{n}"), n, alpha, tuple(rounds), runs
                )
            )
            bar.update(1)
            for b, t in enumerate(rounds):
                mc_sizes, mc_weights = empirical_batch_distribution(simulated[:, b])
                sizes, weights = worst_case_batch_distribution(float(t), n, alpha)
                eps_j = jnp.asarray(eps_fine, float)
                d_ana = np.asarray(batch_mixture_delta(mus_j, sizes, weights, eps_j), np.float64)
                d_mc = np.asarray(
                    batch_mixture_delta(mus_j, mc_sizes, mc_weights, eps_j), np.float64
                )
                se = np.asarray(
                    batch_mixture_delta_se(mus_j, mc_sizes, mc_weights, eps_j, runs), np.float64
                )
                d_plain = np.asarray(gdp_delta(mus_j, eps_j), np.float64)
                gap_in_se = np.where(se > 0, (d_mc - d_ana) / np.maximum(se, 1e-300), 0.0)
                worst_gap = max(worst_gap, float(np.max(gap_in_se)))
                for i, mu in enumerate(mus):
                    row = {
                        "n": n,
                        "t": t,
                        "mu": mu,
                        "mc_runs": runs,
                        "mean_batch_mc": float(np.mean(simulated[:, b])),
                        "mean_batch_analytic": float(
                            np.sum(np.asarray(weights) * np.asarray(sizes))
                        ),
                    }
                    for e in eps_show:
                        k = int(round(e / (eps_fine[1] - eps_fine[0])))
                        row[f"delta_plain@eps={e:g}"] = d_plain[i, k]
                        row[f"delta_analytic@eps={e:g}"] = d_ana[i, k]
                        row[f"delta_mc@eps={e:g}"] = d_mc[i, k]
                        row[f"se_mc@eps={e:g}"] = se[i, k]
                    row["eps_plain@delta=1e-5"] = float(gdp_epsilon(mu, 1e-5))
                    row["eps_analytic@delta=1e-5"] = _epsilon_at(d_ana[i], eps_fine, 1e-5)
                    row["eps_mc@delta=1e-5"] = _epsilon_at(d_mc[i], eps_fine, 1e-5)
                    row["max_mc_excess_in_se"] = float(np.max(gap_in_se[i]))
                    rows.append(row)
                # Plots at mu_plot.
                i = list(mus).index(mu_plot)
                ax = axes_d[a, b]
                ax.plot(
                    eps_fine,
                    d_plain[i],
                    ":",
                    color="grey",
                    label=f"{mu_plot:g}-GDP (no amplification)",
                )
                ax.plot(eps_fine, d_ana[i], "-", color=PALETTE[1], label="analytic worst case")
                ax.plot(eps_fine, d_mc[i], "--", color=PALETTE[0], label="Monte Carlo")
                ax.fill_between(
                    eps_fine,
                    np.maximum(d_mc[i] - 2 * se[i], 1e-12),
                    d_mc[i] + 2 * se[i],
                    color=PALETTE[0],
                    alpha=0.2,
                )
                ax.set_yscale("log")
                ax.set_ylim(1e-7, 1.0)
                ax.set_xlim(0, 6)
                ax.set_title(f"n = {n}, t = {t:g}", fontsize=9)
                ax.set_xlabel("eps")
                ax.set_ylabel("delta(eps)")
                f_plain = np.asarray(gdp_tradeoff(mu_plot, fpr))
                f_ana = np.asarray(batch_mixture_tradeoff(mu_plot, sizes, weights, fpr))
                f_mc = np.asarray(batch_mixture_tradeoff(mu_plot, mc_sizes, mc_weights, fpr))
                ax = axes_t[a, b]
                ax.plot(fpr, 1 - fpr, color="lightgrey", lw=0.8, label="perfect privacy")
                ax.plot(fpr, f_plain, ":", color="grey", label=f"{mu_plot:g}-GDP")
                ax.plot(fpr, f_ana, "-", color=PALETTE[1], label="analytic worst case")
                ax.plot(fpr, f_mc, "--", color=PALETTE[0], label="Monte Carlo")
                ax.set_xscale("log")
                ax.set_title(f"n = {n}, t = {t:g}", fontsize=9)
                ax.set_xlabel("type I error")
                ax.set_ylabel("type II error")
    axes_d[0, 0].legend(fontsize=6)
    axes_t[0, 0].legend(fontsize=6)
    fig_d.suptitle(f"delta(eps) of round t, RW-AdaBatch, mu = {mu_plot:g}, alpha = {alpha:g}")
    fig_t.suptitle(f"tradeoff curve of round t, RW-AdaBatch, mu = {mu_plot:g}, alpha = {alpha:g}")
    return rows, fig_t, fig_d, worst_gap


def run(ctx: RunContext) -> ExperimentResult:
    cfg = ctx.config
    mus = tuple(float(m) for m in cfg["mu"])
    alpha = float(cfg["alpha"])
    n = int(cfg["experts"])
    adabatch_params(np.asarray(mus), alpha)  # validates mu and alpha
    if cfg["privacy_mu"] not in mus:
        raise ValueError(f"privacy_mu must be one of mu={mus}; got {cfg['privacy_mu']}")

    regret_rows, regret_fig = _regret_part(
        ctx, mus, n, int(cfg["horizon"]), float(cfg["gap"]), alpha
    )
    batch_rows, batch_fig, final_batches, grows = _batch_part(
        ctx,
        n,
        int(cfg["batch_horizon"]),
        tuple(cfg["easy_gaps"]),
        alpha,
        float(cfg["privacy_mu"]),
        int(cfg["batch_runs"]),
    )
    privacy_rows, tradeoff_fig, delta_fig, worst_gap = _privacy_part(
        ctx,
        mus,
        tuple(int(x) for x in cfg["privacy_experts"]),
        tuple(int(x) for x in cfg["privacy_rounds"]),
        alpha,
        float(cfg["privacy_mu"]),
        int(cfg["mc_runs"]),
    )

    final = [r for r in regret_rows if r["T"] == int(cfg["horizon"])]
    within_bound = all(r["adabatch_within_bound"] for r in regret_rows)
    within_factor = all(r["adabatch_within_factor"] for r in regret_rows)
    ratios = ", ".join(f"mu={r['mu']:g}: {r['ratio_adabatch_ftpl']:.3f}" for r in final)
    batches = ", ".join(f"{k}: {v:.1f}" for k, v in final_batches.items())
    mid = [r for r in privacy_rows if r["mu"] == float(cfg["privacy_mu"])]
    eps_text = "; ".join(
        f"n={r['n']}, t={r['t']}: {r['eps_plain@delta=1e-5']:.2f} -> analytic "
        f"{r['eps_analytic@delta=1e-5']:.2f} (MC {r['eps_mc@delta=1e-5']:.2f})"
        for r in mid
    )
    summary = (
        f"Regret (n={n}, static Bernoulli gap {cfg['gap']}, T={cfg['horizon']}, {ctx.num_seeds} "
        f"seeds, alpha={alpha}): RW-AdaBatch within its bound at every (mu, T): {within_bound}; "
        f"within a factor 1+alpha/2 of RW-FTPL up to 3 paired standard errors: {within_factor}; "
        f"AdaBatch/FTPL regret ratio at T: {ratios}. Mean size of the batch containing the "
        f"last round t={cfg['batch_horizon']} ({cfg['batch_runs']} runs, mu={cfg['privacy_mu']}): "
        f"{batches} (grows with the gap: {grows}). Privacy of round t (mu={cfg['privacy_mu']}), "
        f"eps at delta=1e-5 without amplification -> with it: {eps_text}. The analytic "
        f"worst-case delta is never below the Monte Carlo one by more than "
        f"{max(worst_gap, 0.0):.2f} Monte Carlo standard errors ({cfg['mc_runs']} runs)."
    )
    return ExperimentResult(
        tables={"regret": regret_rows, "batch_sizes": batch_rows, "privacy": privacy_rows},
        figures={
            "regret": regret_fig,
            "batch_sizes": batch_fig,
            "privacy_tradeoff": tradeoff_fig,
            "privacy_delta": delta_fig,
        },
        summary=summary,
        data="synthetic gains (iid Bernoulli with one best expert; tied gains for the worst case)",
        extra={
            "adabatch_within_bound": within_bound,
            "adabatch_within_factor": within_factor,
            "batches_grow_with_gap": grows,
            "max_mc_excess_in_se": worst_gap,
        },
    )


EXPERIMENT = Experiment(
    name="experts-amplification",
    description="RW-FTPL vs RW-AdaBatch: regret vs bounds, batch sizes, amplified privacy (paper 000)",
    run=run,
    options=(
        Option("mu", floats, (0.5, 1.0, 2.0), "per-round GDP budgets mu"),
        Option("experts", int, 10, "number of experts n for the regret and batch-size parts"),
        Option("horizon", int, 5000, "T of the regret part"),
        Option("gap", float, 0.1, "mean advantage of the best expert in the static environment"),
        Option("alpha", float, 0.01, "RW-AdaBatch's alpha"),
        Option("batch_horizon", int, 10000, "rounds of the batch-size part"),
        Option("easy_gaps", floats, (0.05, 0.2), "gaps of the easy environments (batch sizes)"),
        Option("batch_runs", int, 40, "runs per environment in the batch-size part"),
        Option("privacy_experts", ints, (10, 100), "n values of the privacy part"),
        Option("privacy_rounds", ints, (1000, 10000), "rounds t of the privacy part"),
        Option("privacy_mu", float, 1.0, "mu of the privacy plots and the batch-size part"),
        Option("mc_runs", int, 300, "Monte Carlo runs for the privacy part"),
    ),
    sizes={
        "small": {"seeds": 100},
        "paper": {
            "seeds": 1000,
            "horizon": 100000,
            "batch_horizon": 100000,
            "batch_runs": 200,
            "privacy_rounds": (1000, 10000, 100000),
            "mc_runs": 10000,
        },
    },
    order=20,
)
