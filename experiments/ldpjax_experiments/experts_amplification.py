"""``experts-amplification``: RW-FTPL vs RW-AdaBatch (*Prediction with Expert Advice under LDP*,
Sec. 4) -- regret, batch sizes and the privacy amplification of adaptive batching.

Three parts:

1. Regret vs T on a static environment (iid Bernoulli gains, one best expert by ``gap``) for
   every mu, RW-FTPL and RW-AdaBatch with common random numbers (the same key, hence the same
   noise), against the bounds (eta + 2/eta) sqrt(2 T log n) and (1 + alpha/2) times it. The
   table checks that AdaBatch stays within its bound and within a factor 1 + alpha/2 of
   RW-FTPL's regret up to sampling error (3 standard errors of the paired difference).
2. Batch sizes over rounds (RW-AdaBatch's ``batch_size`` output) on the worst case (all gains
   tied, :func:`~ldpjax.experts.equal_gains`) and on easy environments with a clear best
   expert: batches grow with the gap ("amplification is stronger when data is easy"). The
   analytic worst-case law of :mod:`ldpjax.experts.amplification` is drawn for comparison and
   tabulated as rows of its own (``source`` = analytic). The regret table's
   ``mean_batch_length`` is t / (batches started by t) at every checkpoint.
3. Privacy of round t: the analytic worst-case amplification vs the Monte Carlo estimate from
   simulated runs (empirical law of the batch containing round t, same mixture formulas), as
   tradeoff curves and as delta(eps), for every (n, t); the un-amplified mu-GDP curve is the
   reference. Under each curve panel the Monte Carlo estimate relative to the analytic curve
   (ratio for delta, difference for the tradeoff) shows the +-2 SE band that is a hair's width
   on the curves' own scale. The table reports delta at a few eps (with the Monte Carlo standard error) and
   eps at delta = 1e-5, and the largest amount (in standard errors) by which the analytic
   delta falls below the Monte Carlo one (it should never be more than sampling noise).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from matplotlib.ticker import MaxNLocator

from ldpjax.accounting import gdp_delta, gdp_epsilon, gdp_tradeoff
from ldpjax.accounting.amplification import (
    batch_mixture_delta,
    batch_mixture_delta_se,
    batch_mixture_tradeoff,
    empirical_batch_distribution,
)
from ldpjax.engine import product_grid, record
from ldpjax.experts import (
    EXPERTS_HINTS,
    AdaBatchConfig,
    FTPLConfig,
    adabatch_params,
    bernoulli_gains,
    best_in_hindsight,
    equal_gains,
    ftpl_params,
    regret_bound_adabatch,
    regret_bound_ftpl,
    rw_adabatch,
    rw_ftpl,
    worst_case_batch_distribution,
    worst_case_batch_sizes,
)
from ldpjax_experiments.base import (
    Experiment,
    ExperimentResult,
    Option,
    RunContext,
    floats,
    ints,
)
from ldpjax_experiments.kit import PAPER_TITLES
from ldpjax_experiments.plotting import (
    LINESTYLES,
    MARKERS,
    PALETTE,
    caption,
    figure,
    figure_legend,
    fit_ylim,
    legend,
    mean_band,
)
from ldpjax_experiments.verdicts import judge_condition, summary_lines, with_data

TAG = "experts-amplification-v1"
#: The paper's short title, for figure titles.
PAPER_TITLE = PAPER_TITLES["000"]
ANALYTIC_ENV = "analytic worst case (Thm 2)"


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
        hints=EXPERTS_HINTS,
    ).record
    ada = ctx.simulate(
        rw_adabatch(AdaBatchConfig(n)),
        product_grid(adabatch_params(1.0, alpha), mu=list(mus)),
        horizon,
        inputs=gains,
        grid_ndim=1,
        key=key,
        label="regret-rw-adabatch",
        hints=EXPERTS_HINTS,
        record=record.combine(
            earned=earned,
            # batches started by each checkpoint: t / that count is the mean batch length so far
            batches=record.at_steps(
                checkpoints, lambda out: out.batch_start.astype(jnp.int32), cumulative=True
            ),
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
                    # delta method on the paired runs: sd(ra - R rf) / (sqrt(n) mean(rf))
                    "ratio_se": float(np.std(ra - ra.mean() / rf.mean() * rf, ddof=1)
                                      / (math.sqrt(seeds) * rf.mean()))
                    if rf.mean() > 0 else float("nan"),
                    "adabatch_within_bound": bool(
                        ra.mean() <= bound_a + 3 * ra.std(ddof=1) / math.sqrt(seeds)
                    ),
                    "adabatch_within_factor": bool(excess.mean() <= 3 * se_excess),
                    "mean_batch_length": t / float(np.mean(ada["batches"][i, :, j])),
                }
            )
    fig = _regret_figure(rows, mus, n, gap, alpha, seeds)
    return rows, fig


def _regret_figure(rows, mus, n, gap, alpha, seeds):
    fig, axes = figure(len(mus), 1, width=3.8, height=3.0)
    for i, mu in enumerate(mus):
        ax = axes[0, i]
        sel = [r for r in rows if r["mu"] == mu]
        ts = np.array([r["T"] for r in sel], float)
        lows = []
        for k, (key, label) in enumerate((("ftpl", "RW-FTPL"), ("adabatch", "RW-AdaBatch"))):
            mean = np.array([r[f"regret_{key}"] for r in sel])
            se = np.array([r[f"se_{key}"] for r in sel])
            mean_band(ax, ts, mean, se, label=label, color=PALETTE[k], marker=MARKERS[k],
                      ls=LINESTYLES[k], clip_low=max(float(np.min(mean[mean > 0], initial=1.0))
                                                     / 10, 1e-6),
                      markerfacecolor="none" if k else None)
            lows.append(mean)
        bound = np.array([r["bound_ftpl"] for r in sel])
        ax.plot(ts, bound, ":", color="black", label="FTPL bound (AdaBatch: x(1+alpha/2))")
        ax.set_xscale("log")
        ax.set_yscale("log")
        fit_ylim(ax, lows + [bound], log=True)
        ax.set_xlabel("T (rounds)")
        ax.set_ylabel("mean static regret")
        ax.set_title(f"mu = {mu:g}, n = {n}, gap = {gap:g}")
    figure_legend(fig, axes)
    # the paired ratio is a number per (mu, T), in the table: a panel of it is a flat line
    ratios = np.array([r["ratio_adabatch_ftpl"] for r in rows], np.float64)
    ratio_text = (f"{np.nanmin(ratios):.4g}" if np.nanmin(ratios) == np.nanmax(ratios)
                  else f"{np.nanmin(ratios):.4g} to {np.nanmax(ratios):.4g}")
    caption(fig, data="SYNTHETIC gains: iid Bernoulli with one best expert (common random "
            "numbers for both algorithms)", unit="one round's gain vector g_t (one mu-GDP "
            "release, sensitivity sqrt(n))",
            note=f"{seeds} seeds; shaded bands: +-2 standard errors. The two regret curves "
            "coincide by design (Cor. 2): RW-AdaBatch's paired regret ratio to RW-FTPL is "
            f"{ratio_text} over every (mu, T) (table 'regret'; Cor. 2 allows up to 1 + alpha/2 "
            f"= {1 + alpha / 2:g}). The paper reports no regret numbers for this setting.",
            title=f"RW-FTPL vs RW-AdaBatch: regret and its bounds ({PAPER_TITLE}, Cor. 2)")
    return fig


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
    grid = np.asarray(grid, np.float64)
    analytic_weights = np.asarray(analytic_weights, np.float64)  # (rounds, support)
    analytic_cdf = np.cumsum(analytic_weights, axis=-1)

    def analytic_quantile(j: int, p: float) -> float:
        return float(grid[min(int(np.searchsorted(analytic_cdf[j], p)), grid.size - 1)])

    for name, gap, gains in envs:
        sizes = ctx.simulate(
            algo,
            params,
            horizon,
            inputs=gains,
            record=sizes_rec,
            num_seeds=runs,
            key=ctx.key_for("batch-noise"),
            hints=EXPERTS_HINTS,
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
                    "source": f"simulated ({runs} runs)",
                    "gap": gap,
                    "mu": mu,
                    "t": t,
                    "mean_batch": col.mean(),
                    "median_batch": float(np.median(col)),
                    "q10": float(np.quantile(col, 0.1)),
                    "q90": float(np.quantile(col, 0.9)),
                    "se_mean_batch": float(col.std(ddof=1) / math.sqrt(col.size))
                    if col.size > 1 else None,  # one run: no standard error
                }
            )
    # The analytic worst-case law (Thm 2) as rows of its own: it holds for tied gains and does
    # not depend on mu, so it holds at this part's mu too (exact, so no standard error).
    for j, t in enumerate(rounds):
        rows.append(
            {
                "environment": ANALYTIC_ENV,
                "source": "analytic (Theorem 2)",
                "gap": 0.0,
                "mu": mu,
                "t": t,
                "mean_batch": float(np.sum(grid * analytic_weights[j])),
                "median_batch": analytic_quantile(j, 0.5),
                "q10": analytic_quantile(j, 0.1),
                "q90": analytic_quantile(j, 0.9),
                "se_mean_batch": 0.0,
            }
        )
    fig, axes = figure(1, 1, width=5.2, height=3.8)
    ax = axes[0, 0]
    values = []
    for k, (name, _, _) in enumerate(envs):
        sizes = curves[name]
        mean = sizes.mean(0)
        se = sizes.std(0, ddof=1) / math.sqrt(sizes.shape[0]) if sizes.shape[0] > 1 else 0 * mean
        mean_band(ax, rounds, mean, se, label=f"{name}: mean", color=PALETTE[k % len(PALETTE)],
                  marker=MARKERS[k % len(MARKERS)], ls=LINESTYLES[k % len(LINESTYLES)],
                  clip_low=0.5)
        values += [mean, np.maximum(mean - 2 * se, 0.5), mean + 2 * se]
    analytic_mean = (grid * analytic_weights).sum(-1)
    ax.plot(rounds, analytic_mean, "k:", marker="x", label="analytic worst case (Thm 2): mean")
    values.append(analytic_mean)
    ax.set_xscale("log")
    ax.set_yscale("log")
    fit_ylim(ax, values, log=True)
    ax.set_xlabel("round t")
    ax.set_ylabel("size of the batch containing t")
    ax.set_title(f"RW-AdaBatch batch sizes (n = {n}, mu = {mu:g}, alpha = {alpha:g})")
    legend(ax)
    caption(fig, data="SYNTHETIC gains: tied (the worst case) and iid Bernoulli with one best "
            "expert by the gap", unit="one round's gain vector (mu-GDP per release; a round in a "
            "batch of B rounds is (mu/sqrt B)-GDP centrally, ex post)",
            note=f"{runs} runs per environment; shaded bands: +-2 standard errors of the mean.",
            title=f"Adaptive batching grows with the gap ({PAPER_TITLE}, Sec. 4)")
    final = {name: float(np.mean(curves[name][:, -1])) for name, _, _ in envs}
    values = list(final.values())
    grows = all(a < b for a, b in zip(values[:-1], values[1:], strict=True))
    return rows, fig, final, grows


# --------------------------------------------------------------------------- part 3: privacy
def _epsilon_at(deltas: np.ndarray, eps: np.ndarray, target: float) -> float:
    """Smallest eps on the grid with delta(eps) <= target (inf if none)."""
    below = np.flatnonzero(deltas <= target)
    return float(eps[below[0]]) if below.size else float("inf")


ANALYTIC_LABEL = "analytic worst case (Thm 2, Lemmas 1-2)"
MC_LABEL = "Monte Carlo (+-2 SE band)"


def _delta_panels(ax, rx, eps, shown, d_plain, d_ana, d_mc, se, mu, title):
    """delta(eps) on a log axis (top) and Monte Carlo / analytic with its +-2 SE band (below:
    on the log axis the band is a hair's width)."""

    def visible(d):
        return np.where(shown & (d >= 1e-7) & (d <= 1.0), d, np.nan)

    ax.plot(eps, visible(d_plain), ":", color="grey", label=f"{mu:g}-GDP (no amplification)")
    ax.plot(eps, visible(d_ana), "-", color=PALETTE[1], label=ANALYTIC_LABEL)
    ax.plot(eps, visible(d_mc), "--", color=PALETTE[0], label=MC_LABEL)
    ax.fill_between(eps[shown], np.maximum(d_mc - 2 * se, 1e-7)[shown],
                    np.minimum(d_mc + 2 * se, 1.0)[shown], color=PALETTE[0], alpha=0.2, lw=0)
    ax.set_yscale("log")
    ax.set_ylim(1e-7, 1.0)
    ax.set_xlim(0, 6)
    ax.set_title(title)
    ax.set_xlabel("eps")
    ax.set_ylabel("delta(eps)")
    drawn = shown & (d_ana >= 1e-7)  # where the analytic curve is drawn above
    ref = np.where(drawn, d_ana, np.nan)
    ratio, lo, hi = d_mc / ref, (d_mc - 2 * se) / ref, (d_mc + 2 * se) / ref
    rx.axhline(1.0, color=PALETTE[1], lw=1.5, label=ANALYTIC_LABEL)
    rx.plot(eps, ratio, "--", color=PALETTE[0], label=MC_LABEL)
    rx.fill_between(eps[drawn], lo[drawn], hi[drawn], color=PALETTE[0], alpha=0.3, lw=0)
    rx.set_xlim(0, 6)
    fit_ylim(rx, [lo, hi, [1.0]])
    rx.yaxis.set_major_locator(MaxNLocator(3))  # a short panel: three labels at most
    rx.set_xlabel("eps")
    rx.set_ylabel("MC / analytic delta")


def _tradeoff_panels(ax, rx, fpr, f_plain, f_ana, f_mc, f_se, mu, title):
    """The tradeoff curves (top) and Monte Carlo - analytic with its +-2 SE band (below)."""
    ax.plot(fpr, 1 - fpr, color="lightgrey", lw=0.8, label="perfect privacy")
    ax.plot(fpr, f_plain, ":", color="grey", label=f"{mu:g}-GDP (no amplification)")
    ax.plot(fpr, f_ana, "-", color=PALETTE[1], label=ANALYTIC_LABEL)
    ax.plot(fpr, f_mc, "--", color=PALETTE[0], label=MC_LABEL)
    ax.fill_between(fpr, np.clip(f_mc - 2 * f_se, 0, 1), np.clip(f_mc + 2 * f_se, 0, 1),
                    color=PALETTE[0], alpha=0.2, lw=0)
    ax.set_xscale("log")
    ax.set_title(title)
    ax.set_xlabel("type I error")
    ax.set_ylabel("type II error")
    lo, hi = f_mc - 2 * f_se - f_ana, f_mc + 2 * f_se - f_ana
    rx.axhline(0.0, color=PALETTE[1], lw=1.5, label=ANALYTIC_LABEL)
    rx.plot(fpr, f_mc - f_ana, "--", color=PALETTE[0], label=MC_LABEL)
    rx.fill_between(fpr, lo, hi, color=PALETTE[0], alpha=0.3, lw=0)
    rx.set_xscale("log")
    fit_ylim(rx, [lo, hi, [0.0]])
    rx.yaxis.set_major_locator(MaxNLocator(3))  # a short panel: three labels at most
    rx.set_xlabel("type I error")
    rx.set_ylabel("MC - analytic\n(type II error)")



def _privacy_rows(n, t, mus, runs, simulated, sizes, weights, eps_fine, eps_show, eps_plain,
                  curves) -> list[dict]:
    """One table row per mu at round t for n experts: the plain, analytic and Monte Carlo delta
    at the shown eps, and epsilon at delta = 1e-5 (with the Monte Carlo band)."""
    d_plain, d_ana, d_mc, se, gap_in_se = curves
    rows = []
    for i, mu in enumerate(mus):
        row = {
            "n": n,
            "t": t,
            "mu": mu,
            "mc_runs": runs,
            "mean_batch_mc": float(np.mean(simulated)),
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
        row["eps_plain@delta=1e-5"] = eps_plain[mu]
        row["eps_analytic@delta=1e-5"] = _epsilon_at(d_ana[i], eps_fine, 1e-5)
        row["eps_mc@delta=1e-5"] = _epsilon_at(d_mc[i], eps_fine, 1e-5)
        # +-2 SE of the Monte Carlo delta curve, read off at delta = 1e-5
        row["eps_mc_lo@delta=1e-5"] = _epsilon_at(d_mc[i] - 2 * se[i], eps_fine, 1e-5)
        row["eps_mc_hi@delta=1e-5"] = _epsilon_at(d_mc[i] + 2 * se[i], eps_fine, 1e-5)
        row["max_mc_excess_in_se"] = float(np.max(gap_in_se[i]))
        rows.append(row)
    return rows


def _privacy_part(ctx: RunContext, mus, experts, rounds, alpha, mu_plot, runs):
    eps_fine = np.linspace(0.0, 12.0, 1201)
    eps_show = (0.5, 1.0, 2.0)
    fpr = np.geomspace(1e-5, 1.0, 60)
    rows = []
    # per n: the curves (top) and the Monte Carlo estimate relative to the analytic one (below)
    panels = dict(width=3.4, height=2.2, gridspec_kw={"height_ratios": [2.0, 1.1] * len(experts)})
    fig_t, axes_t = figure(len(rounds), 2 * len(experts), **panels)
    fig_d, axes_d = figure(len(rounds), 2 * len(experts), **panels)
    mus_j = jnp.asarray(mus, float)[:, None]
    eps_j = jnp.asarray(eps_fine, float)
    # the un-amplified references do not depend on (n, t): computed once
    d_plain = np.asarray(gdp_delta(mus_j, eps_j), np.float64)
    f_plain = np.asarray(gdp_tradeoff(mu_plot, fpr))
    eps_plain = {mu: float(gdp_epsilon(mu, 1e-5)) for mu in mus}
    worst_gap = 0.0
    bar = ctx.progress(len(experts), "privacy (Monte Carlo)")
    with bar:
        mc_runs = {}
        for n in experts:
            mc_runs[n] = np.asarray(
                worst_case_batch_sizes(ctx.key_for(f"privacy-mc-{n}"), n, alpha, tuple(rounds),
                                       runs)
            )
            bar.update(1)
        # every (n, t) law padded (weight 0) to the most distinct sizes of any: one compiled
        # kernel per curve instead of one per (n, t)
        width = max(len(np.unique(col)) for draws in mc_runs.values() for col in draws.T)
        for a, n in enumerate(experts):
            simulated = mc_runs[n]
            for b, t in enumerate(rounds):
                mc_sizes, mc_weights = empirical_batch_distribution(simulated[:, b], width=width)
                sizes, weights = worst_case_batch_distribution(float(t), n, alpha)
                d_ana = np.asarray(batch_mixture_delta(mus_j, sizes, weights, eps_j), np.float64)
                d_mc = np.asarray(
                    batch_mixture_delta(mus_j, mc_sizes, mc_weights, eps_j), np.float64
                )
                se = np.asarray(
                    batch_mixture_delta_se(mus_j, mc_sizes, mc_weights, eps_j, runs), np.float64
                )
                gap_in_se = np.where(se > 0, (d_mc - d_ana) / np.maximum(se, 1e-300), 0.0)
                worst_gap = max(worst_gap, float(np.max(gap_in_se)))
                rows += _privacy_rows(n, t, mus, runs, simulated[:, b], sizes, weights, eps_fine,
                                      eps_show, eps_plain, (d_plain, d_ana, d_mc, se, gap_in_se))
                # Plots at mu_plot; the delta panels show eps in [0, 6], delta in [1e-7, 1].
                i = list(mus).index(mu_plot)
                shown = eps_fine <= 6.0
                f_ana = np.asarray(batch_mixture_tradeoff(mu_plot, sizes, weights, fpr))
                f_mc = np.asarray(batch_mixture_tradeoff(mu_plot, mc_sizes, mc_weights, fpr))
                # bootstrap the runs (multinomial reweighting of the same support) for a band
                rng = np.random.default_rng(
                    int(jax.random.randint(ctx.key_for(f"bootstrap-{n}-{t}"), (), 0, 2**31 - 1)))
                # drawn on the observed sizes only (the padding would change the multinomial's
                # draws), then padded like the law
                used = np.flatnonzero(mc_weights > 0)
                boot_w = np.zeros((50, mc_weights.size))
                boot_w[:, used] = rng.multinomial(runs, mc_weights[used], size=50) / runs
                f_boot = np.asarray(batch_mixture_tradeoff(
                    mu_plot, np.asarray(mc_sizes)[None, None, :], boot_w[:, None, :], fpr))
                f_se = f_boot.std(0, ddof=1)
                _delta_panels(axes_d[2 * a, b], axes_d[2 * a + 1, b], eps_fine, shown,
                              d_plain[i], d_ana[i], d_mc[i], se[i], mu_plot, f"n = {n}, t = {t:g}")
                _tradeoff_panels(axes_t[2 * a, b], axes_t[2 * a + 1, b], fpr, f_plain, f_ana,
                                 f_mc, f_se, mu_plot, f"n = {n}, t = {t:g}")
    notes = {
        "delta(eps)": "Shaded bands: +-2 standard errors of the Monte Carlo delta (exact SE). "
        "Under each panel, the Monte Carlo delta divided by the analytic one, where the analytic "
        "delta is drawn (>= 1e-7): the analytic ratio 1 should lie inside the band.",
        "tradeoff curve": "Shaded bands: +-2 standard errors of the Monte Carlo tradeoff curve "
        "(bootstrap of the runs). Under each panel, the Monte Carlo curve minus the analytic "
        "one: the analytic difference 0 should lie inside the band.",
    }
    for fig, what, axes in ((fig_d, "delta(eps)", axes_d), (fig_t, "tradeoff curve", axes_t)):
        figure_legend(fig, axes, ncols=2)
        caption(fig, data="SYNTHETIC tied gains (the worst case of Theorem 2) for the Monte "
                "Carlo runs; the analytic curve needs no data", unit="one round t's gain vector "
                f"(mu = {mu_plot:g}-GDP locally; the curves are its amplified central privacy)",
                note=f"Monte Carlo: {runs} runs. {notes[what]} The paper shows these curves only "
                "as plots.",
                title=f"{what} of round t, RW-AdaBatch, mu = {mu_plot:g}, alpha = {alpha:g} "
                f"({PAPER_TITLE}, Thm 2)")
    return rows, fig_t, fig_d, worst_gap


def _verdicts(regret_rows, final_batches, grows, privacy_rows, worst_gap, cfg, alpha, seeds):
    """The paper's claims about RW-FTPL / RW-AdaBatch (Cor. 2, Thm 2, Sec. 4).

    Cor. 2's "AdaBatch costs at most a factor 1 + alpha/2 over FTPL" is a statement about the
    two regret *bounds*, so it is judged as the bound it gives (the second verdict); the paired
    ratio of realised regrets is kept in the regret table and figure but is no verdict: on the
    static environment both algorithms see the same gains and the same noise, and the ratio
    came out at exactly 1 (a check that could not fail).
    """
    name = "experts-amplification"
    out = []
    f_ok = all(r["regret_ftpl"] <= r["bound_ftpl"] + 2 * r["se_ftpl"] for r in regret_rows)
    out.append(judge_condition(
        name, "RW-FTPL regret <= (eta + 2/eta) sqrt(2 T log n)", f_ok,
        ours=max(r["regret_ftpl"] / r["bound_ftpl"] for r in regret_rows), paper=1.0,
        reference="bound",
        measure="largest mean static regret / its bound over (mu, T), unitless; must be <= 1",
        tolerance_note="holds within 2 SE of the mean regret in every cell"))
    a_ok = all(r["adabatch_within_bound"] for r in regret_rows)
    out.append(judge_condition(
        name, "RW-AdaBatch regret <= (1 + alpha/2)(eta + 2/eta) sqrt(2 T log n) (Cor. 2)", a_ok,
        ours=max(r["regret_adabatch"] / r["bound_adabatch"] for r in regret_rows), paper=1.0,
        reference="bound",
        measure="largest mean static regret / its bound over (mu, T), unitless; must be <= 1",
        tolerance_note="holds within 3 SE of the mean regret in every cell"))
    names = list(final_batches)
    out.append(judge_condition(
        name, "batches grow with the gap (amplification is stronger on easy data)", grows,
        partly=final_batches[names[-1]] > final_batches[names[0]],
        ours=final_batches[names[-1]] / final_batches[names[0]], paper=None,
        measure=f"mean batch length at t={cfg['batch_horizon']}, {names[-1]} / {names[0]} "
        "(unitless; > 1 when batches grow with the gap)"))
    out.append(judge_condition(
        name, "the analytic worst-case delta(eps) (Thm 2, Lemmas 1-2) is never below the "
        "Monte Carlo one", worst_gap <= 3.0, ours=max(worst_gap, 0.0), paper=0.0, tolerance=3.0,
        reference="bound",
        measure="largest excess of the Monte Carlo delta over the analytic one, in standard "
        "errors of the Monte Carlo delta, over (eps, mu, n, t); <= 0 when the bound holds",
        tolerance_note="3 SE (the Monte Carlo estimate's sampling error)"))
    mid = [r for r in privacy_rows if r["mu"] == float(cfg["privacy_mu"])]
    t_max = max(r["t"] for r in mid)
    at_max = [r for r in mid if r["t"] == t_max]
    amplified = [r["eps_analytic@delta=1e-5"] < r["eps_plain@delta=1e-5"] for r in at_max]
    out.append(judge_condition(
        name, f"batching amplifies privacy at long horizons (eps at delta=1e-5, t={t_max})",
        all(amplified), partly=any(amplified),
        ours=max(r["eps_analytic@delta=1e-5"] for r in at_max),
        paper=at_max[0]["eps_plain@delta=1e-5"], reference="un-amplified eps",
        measure=f"largest analytic eps at delta = 1e-5 over n (mu = {cfg['privacy_mu']}, "
        f"t = {t_max}) against the un-amplified eps of the same releases; amplified when "
        "ours < the un-amplified one"))
    step = 0.01  # the eps grid
    tight = [r["eps_mc_lo@delta=1e-5"] - step <= r["eps_analytic@delta=1e-5"]
             <= r["eps_mc_hi@delta=1e-5"] + step for r in mid]
    out.append(judge_condition(
        name, "the analytic bound is tight at small delta (delta = 1e-5)", all(tight),
        partly=any(tight),
        ours=max(abs(r["eps_analytic@delta=1e-5"] - r["eps_mc@delta=1e-5"]) for r in mid),
        paper=None,
        measure="largest |eps analytic - eps Monte Carlo| at delta = 1e-5 over (n, t), in eps "
        "units; each must lie within the Monte Carlo +-2 SE band (+ grid step 0.01)"))
    return out


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

    within_bound = all(r["adabatch_within_bound"] for r in regret_rows)
    within_factor = all(r["adabatch_within_factor"] for r in regret_rows)
    verdicts = with_data(_verdicts(regret_rows, final_batches, grows, privacy_rows, worst_gap,
                                   cfg, alpha, ctx.num_seeds), "synthetic")
    summary = (
        f"Regret: n={n}, static Bernoulli gap {cfg['gap']}, T={cfg['horizon']}, {ctx.num_seeds} "
        f"seeds, alpha={alpha}, mu in {list(mus)}. Batch sizes: t up to {cfg['batch_horizon']}, "
        f"{cfg['batch_runs']} runs, mu={cfg['privacy_mu']}. Privacy of round t: n in "
        f"{list(cfg['privacy_experts'])}, t in {list(cfg['privacy_rounds'])}, {cfg['mc_runs']} "
        f"Monte Carlo runs.\n" + summary_lines(verdicts)
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
        verdicts=verdicts,
        extra={
            "adabatch_within_bound": within_bound,
            "adabatch_within_factor": within_factor,
            "batches_grow_with_gap": grows,
            "max_mc_excess_in_se": worst_gap,
        },
    )


EXPERIMENT = Experiment(
    name="experts-amplification",
    description="RW-FTPL vs RW-AdaBatch: regret vs bounds, batch sizes, amplified privacy "
    f"({PAPER_TITLE})",
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
    cost=45,
)
