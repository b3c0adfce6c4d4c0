"""The report of ``experts-amplification``: tables, verdicts, figures and summary from an
:class:`~ldpjax_experiments.experts_amplification.study.AmplificationStudy`, pure (no JAX)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import MaxNLocator

from ldpjax_experiments.base import (
    ExperimentResult,
)
from ldpjax_experiments.experts_amplification.study import (
    ANALYTIC_ENV,
    PAPER_TITLE,
    AmplificationStudy,
    PrivacyPanel,
)
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


def regret_rows(s: AmplificationStudy) -> list[dict]:
    """The regret table: one row per (mu, T), means and standard errors over the seeds."""
    r = s.regret
    alpha = s.alpha
    seeds = r.regret_ftpl.shape[1]
    rows = []
    for i, mu in enumerate(s.mus):
        for j, t in enumerate(r.checkpoints):
            rf, ra = r.regret_ftpl[i, :, j], r.regret_adabatch[i, :, j]
            excess = ra - (1 + alpha / 2) * rf  # paired (common random numbers)
            se_excess = excess.std(ddof=1) / math.sqrt(seeds)
            bound_f = float(r.bound_ftpl[i, j])
            bound_a = float(r.bound_adabatch[i, j])
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
                    "mean_batch_length": t / float(np.mean(r.batches[i, :, j])),
                }
            )
    return rows


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



def batch_rows(s: AmplificationStudy) -> list[dict]:
    """The batch-size table: per environment and round t the mean, median, 10% and 90%
    quantiles of the batch containing t over the runs, then Theorem 2's law as rows of its own
    (``source`` = analytic)."""
    b = s.batches
    rows = []
    for name, gap, sizes in zip(b.environments, b.gaps, b.sizes, strict=True):
        runs = sizes.shape[0]
        for j, t in enumerate(b.rounds):
            col = sizes[:, j]
            rows.append(
                {
                    "environment": name,
                    "source": f"simulated ({runs} runs)",
                    "gap": gap,
                    "mu": s.privacy_mu,
                    "t": t,
                    "mean_batch": col.mean(),
                    "median_batch": float(np.median(col)),
                    "q10": float(np.quantile(col, 0.1)),
                    "q90": float(np.quantile(col, 0.9)),
                    "se_mean_batch": float(col.std(ddof=1) / math.sqrt(col.size))
                    if col.size > 1 else None,  # one run: no standard error
                }
            )
    grid, weights = b.analytic_sizes, b.analytic_weights
    cdf = np.cumsum(weights, axis=-1)

    def analytic_quantile(j: int, p: float) -> float:
        return float(grid[min(int(np.searchsorted(cdf[j], p)), grid.size - 1)])

    # The analytic worst-case law (Thm 2) as rows of its own: it holds for tied gains and does
    # not depend on mu, so it holds at this part's mu too (exact, so no standard error).
    for j, t in enumerate(b.rounds):
        rows.append(
            {
                "environment": ANALYTIC_ENV,
                "source": "analytic (Theorem 2)",
                "gap": 0.0,
                "mu": s.privacy_mu,
                "t": t,
                "mean_batch": float(np.sum(grid * weights[j])),
                "median_batch": analytic_quantile(j, 0.5),
                "q10": analytic_quantile(j, 0.1),
                "q90": analytic_quantile(j, 0.9),
                "se_mean_batch": 0.0,
            }
        )
    return rows


def final_batches(s: AmplificationStudy) -> dict[str, float]:
    """Mean batch length at the last round, per environment (in the study's order)."""
    b = s.batches
    return {name: float(np.mean(sizes[:, -1]))
            for name, sizes in zip(b.environments, b.sizes, strict=True)}


def _grows(final: dict[str, float]) -> bool:
    values = list(final.values())
    return all(a < b for a, b in zip(values[:-1], values[1:], strict=True))


def _batch_figure(s: AmplificationStudy):
    b = s.batches
    rounds = list(b.rounds)
    fig, axes = figure(1, 1, width=5.2, height=3.8)
    ax = axes[0, 0]
    values = []
    for k, (name, sizes) in enumerate(zip(b.environments, b.sizes, strict=True)):
        mean = sizes.mean(0)
        se = sizes.std(0, ddof=1) / math.sqrt(sizes.shape[0]) if sizes.shape[0] > 1 else 0 * mean
        mean_band(ax, rounds, mean, se, label=f"{name}: mean", color=PALETTE[k % len(PALETTE)],
                  marker=MARKERS[k % len(MARKERS)], ls=LINESTYLES[k % len(LINESTYLES)],
                  clip_low=0.5)
        values += [mean, np.maximum(mean - 2 * se, 0.5), mean + 2 * se]
    analytic_mean = (b.analytic_sizes * b.analytic_weights).sum(-1)
    ax.plot(rounds, analytic_mean, "k:", marker="x", label="analytic worst case (Thm 2): mean")
    values.append(analytic_mean)
    ax.set_xscale("log")
    ax.set_yscale("log")
    fit_ylim(ax, values, log=True)
    ax.set_xlabel("round t")
    ax.set_ylabel("size of the batch containing t")
    ax.set_title(f"RW-AdaBatch batch sizes (n = {s.experts}, mu = {s.privacy_mu:g}, "
                 f"alpha = {s.alpha:g})")
    legend(ax)
    caption(fig, data="SYNTHETIC gains: tied (the worst case) and iid Bernoulli with one best "
            "expert by the gap", unit="one round's gain vector (mu-GDP per release; a round in a "
            "batch of B rounds is (mu/sqrt B)-GDP centrally, ex post)",
            note=f"{s.batch_runs} runs per environment; shaded bands: +-2 standard errors of the "
            "mean.",
            title=f"Adaptive batching grows with the gap ({PAPER_TITLE}, Sec. 4)")
    return fig


def _epsilon_at(deltas: np.ndarray, eps: np.ndarray, target: float) -> float:
    """Smallest eps on the grid with delta(eps) <= target (inf if none)."""
    below = np.flatnonzero(deltas <= target)
    return float(eps[below[0]]) if below.size else float("inf")


def _gap_in_se(p: PrivacyPanel) -> np.ndarray:
    """(mu, eps): by how many standard errors the Monte Carlo delta exceeds the analytic one."""
    return np.where(p.delta_se > 0, (p.delta_mc - p.delta_analytic)
                    / np.maximum(p.delta_se, 1e-300), 0.0)


def worst_gap(s: AmplificationStudy) -> float:
    """The largest excess of the Monte Carlo delta over the analytic one, in standard errors,
    over every (n, t, mu, eps) (0 when it never exceeds it)."""
    out = 0.0
    for p in s.privacy.panels:
        out = max(out, float(np.max(_gap_in_se(p))))
    return out


def privacy_rows(s: AmplificationStudy) -> list[dict]:
    """One row per (n, t, mu): the plain, analytic and Monte Carlo delta at the shown eps, and
    epsilon at delta = 1e-5 (with the Monte Carlo band)."""
    pr = s.privacy
    eps_fine = pr.eps_grid
    rows = []
    for p in pr.panels:
        d_plain, d_ana, d_mc, se = pr.delta_plain, p.delta_analytic, p.delta_mc, p.delta_se
        gap_in_se = _gap_in_se(p)
        for i, mu in enumerate(s.mus):
            row = {
                "n": p.n,
                "t": p.t,
                "mu": mu,
                "mc_runs": s.mc_runs,
                "mean_batch_mc": float(np.mean(p.simulated)),
                "mean_batch_analytic": float(np.sum(p.weights * p.sizes)),
            }
            for e in pr.eps_show:
                k = int(round(e / (eps_fine[1] - eps_fine[0])))
                row[f"delta_plain@eps={e:g}"] = d_plain[i, k]
                row[f"delta_analytic@eps={e:g}"] = d_ana[i, k]
                row[f"delta_mc@eps={e:g}"] = d_mc[i, k]
                row[f"se_mc@eps={e:g}"] = se[i, k]
            row["eps_plain@delta=1e-5"] = pr.eps_plain[i]
            row["eps_analytic@delta=1e-5"] = _epsilon_at(d_ana[i], eps_fine, 1e-5)
            row["eps_mc@delta=1e-5"] = _epsilon_at(d_mc[i], eps_fine, 1e-5)
            # +-2 SE of the Monte Carlo delta curve, read off at delta = 1e-5
            row["eps_mc_lo@delta=1e-5"] = _epsilon_at(d_mc[i] - 2 * se[i], eps_fine, 1e-5)
            row["eps_mc_hi@delta=1e-5"] = _epsilon_at(d_mc[i] + 2 * se[i], eps_fine, 1e-5)
            row["max_mc_excess_in_se"] = float(np.max(gap_in_se[i]))
            rows.append(row)
    return rows


def _privacy_figures(s: AmplificationStudy):
    """The tradeoff and delta(eps) figures at ``privacy_mu``: one column per t, two panel rows
    (curves, then Monte Carlo against analytic) per n."""
    pr = s.privacy
    mu_plot = s.privacy_mu
    experts, rounds = s.privacy_experts, s.privacy_rounds
    # per n: the curves (top) and the Monte Carlo estimate relative to the analytic one (below)
    panels = dict(width=3.4, height=2.2, gridspec_kw={"height_ratios": [2.0, 1.1] * len(experts)})
    fig_t, axes_t = figure(len(rounds), 2 * len(experts), **panels)
    fig_d, axes_d = figure(len(rounds), 2 * len(experts), **panels)
    i = list(s.mus).index(mu_plot)
    # The delta panels show eps in [0, 6], delta in [1e-7, 1].
    shown = pr.eps_grid <= 6.0
    for p in pr.panels:
        a, b = experts.index(p.n), rounds.index(p.t)
        title = f"n = {p.n}, t = {p.t:g}"
        _delta_panels(axes_d[2 * a, b], axes_d[2 * a + 1, b], pr.eps_grid, shown,
                      pr.delta_plain[i], p.delta_analytic[i], p.delta_mc[i], p.delta_se[i],
                      mu_plot, title)
        _tradeoff_panels(axes_t[2 * a, b], axes_t[2 * a + 1, b], pr.fpr, pr.tradeoff_plain,
                         p.tradeoff_analytic, p.tradeoff_mc, p.tradeoff_se, mu_plot, title)
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
                note=f"Monte Carlo: {s.mc_runs} runs. {notes[what]} The paper shows these curves "
                "only as plots.",
                title=f"{what} of round t, RW-AdaBatch, mu = {mu_plot:g}, alpha = {s.alpha:g} "
                f"({PAPER_TITLE}, Thm 2)")
    return fig_t, fig_d


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




def _verdicts(s: AmplificationStudy, regret_rows, final_batches, grows, privacy_rows,
              worst_gap):
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
        measure=f"mean batch length at t={s.batch_horizon}, {names[-1]} / {names[0]} "
        "(unitless; > 1 when batches grow with the gap)"))
    out.append(judge_condition(
        name, "the analytic worst-case delta(eps) (Thm 2, Lemmas 1-2) is never below the "
        "Monte Carlo one", worst_gap <= 3.0, ours=max(worst_gap, 0.0), paper=0.0, tolerance=3.0,
        reference="bound",
        measure="largest excess of the Monte Carlo delta over the analytic one, in standard "
        "errors of the Monte Carlo delta, over (eps, mu, n, t); <= 0 when the bound holds",
        tolerance_note="3 SE (the Monte Carlo estimate's sampling error)"))
    mid = [r for r in privacy_rows if r["mu"] == s.privacy_mu]
    t_max = max(r["t"] for r in mid)
    at_max = [r for r in mid if r["t"] == t_max]
    amplified = [r["eps_analytic@delta=1e-5"] < r["eps_plain@delta=1e-5"] for r in at_max]
    out.append(judge_condition(
        name, f"batching amplifies privacy at long horizons (eps at delta=1e-5, t={t_max})",
        all(amplified), partly=any(amplified),
        ours=max(r["eps_analytic@delta=1e-5"] for r in at_max),
        paper=at_max[0]["eps_plain@delta=1e-5"], reference="un-amplified eps",
        measure=f"largest analytic eps at delta = 1e-5 over n (mu = {s.privacy_mu}, "
        f"t = {t_max}) against the un-amplified eps of the same releases; amplified when "
        "ours < the un-amplified one"))
    step = s.privacy.eps_step  # the eps grid's resolution
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




def report(s: AmplificationStudy) -> ExperimentResult:
    """Tables, figures, verdicts and summary of one study (pure: no keys, no simulation)."""
    regret = regret_rows(s)
    batches = batch_rows(s)
    final = final_batches(s)
    grows = _grows(final)
    privacy = privacy_rows(s)
    gap_se = worst_gap(s)
    within_bound = all(r["adabatch_within_bound"] for r in regret)
    within_factor = all(r["adabatch_within_factor"] for r in regret)
    verdicts = with_data(_verdicts(s, regret, final, grows, privacy, gap_se), s.data_label)
    summary = (
        f"Regret: n={s.experts}, static Bernoulli gap {s.gap}, T={s.horizon}, {s.seeds} "
        f"seeds, alpha={s.alpha}, mu in {list(s.mus)}. Batch sizes: t up to {s.batch_horizon}, "
        f"{s.batch_runs} runs, mu={s.privacy_mu}. Privacy of round t: n in "
        f"{list(s.privacy_experts)}, t in {list(s.privacy_rounds)}, {s.mc_runs} "
        f"Monte Carlo runs.\n" + summary_lines(verdicts)
    )
    fig_t, fig_d = _privacy_figures(s)
    return ExperimentResult(
        tables={"regret": regret, "batch_sizes": batches, "privacy": privacy},
        figures={
            "regret": _regret_figure(regret, s.mus, s.experts, s.gap, s.alpha,
                                     s.regret.regret_ftpl.shape[1]),
            "batch_sizes": _batch_figure(s),
            "privacy_tradeoff": fig_t,
            "privacy_delta": fig_d,
        },
        summary=summary,
        data=s.data_text,
        verdicts=verdicts,
        extra={
            "adabatch_within_bound": within_bound,
            "adabatch_within_factor": within_factor,
            "batches_grow_with_gap": grows,
            "max_mc_excess_in_se": gap_se,
        },
    )



__all__ = ["batch_rows", "final_batches", "privacy_rows", "regret_rows", "report", "worst_gap"]
