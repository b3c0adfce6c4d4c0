"""The study of ``experts-amplification``: the runs and the accountants' curves, as typed
records (the report, :mod:`ldpjax_experiments.experts_amplification.report`, reads only them)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

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
    RunContext,
)
from ldpjax_experiments.kit import PAPER_TITLES

TAG = "experts-amplification-v1"
#: The paper's short title, for figure titles.
PAPER_TITLE = PAPER_TITLES["000"]
ANALYTIC_ENV = "analytic worst case (Thm 2)"


def _log_grid(first: int, last: int, count: int) -> list[int]:
    return sorted({int(round(x)) for x in np.geomspace(first, last, count)} | {last})


# --------------------------------------------------------------------------- the study
class RegretStudy(NamedTuple):
    """Part 1: RW-FTPL and RW-AdaBatch on the static environment (common random numbers).

    Attributes:
      checkpoints: (checkpoint,) the horizons T at which the regret is read.
      regret_ftpl: (mu, seed, checkpoint) RW-FTPL's static regret, best expert's total gain
        by T minus the algorithm's.
      regret_adabatch: (mu, seed, checkpoint) RW-AdaBatch's static regret (same noise).
      batches: (mu, seed, checkpoint) batches RW-AdaBatch started by T.
      bound_ftpl: (mu, checkpoint) (eta + 2/eta) sqrt(2 T log n).
      bound_adabatch: (mu, checkpoint) (1 + alpha/2) times the FTPL bound (Cor. 2).
    """

    checkpoints: tuple[int, ...]
    regret_ftpl: np.ndarray
    regret_adabatch: np.ndarray
    batches: np.ndarray
    bound_ftpl: np.ndarray
    bound_adabatch: np.ndarray


class BatchStudy(NamedTuple):
    """Part 2: RW-AdaBatch's batch sizes per environment, and Theorem 2's worst-case law.

    Attributes:
      rounds: (round,) the rounds t read.
      environments: (env,) names, the tied worst case first, then the easy gaps in order.
      gaps: (env,) each environment's gap (0 for the tied one).
      sizes: per environment, (run, round) the size of the batch containing round t.
      analytic_sizes: (support,) the batch sizes of the analytic worst-case law.
      analytic_weights: (round, support) its probabilities at each round.
    """

    rounds: tuple[int, ...]
    environments: tuple[str, ...]
    gaps: tuple[float, ...]
    sizes: tuple[np.ndarray, ...]
    analytic_sizes: np.ndarray
    analytic_weights: np.ndarray


class PrivacyPanel(NamedTuple):
    """Part 3 at one (n, t): the privacy of round t, analytic and Monte Carlo.

    Attributes:
      n: number of experts; t: the round.
      simulated: (run,) Monte Carlo sizes of the batch containing t (tied gains).
      sizes, weights: (support,) Theorem 2's worst-case law of that batch size.
      delta_analytic: (mu, eps) delta(eps) of the analytic mixture (Lemmas 1-2).
      delta_mc: (mu, eps) the same mixture formula on the Monte Carlo law.
      delta_se: (mu, eps) the exact standard error of ``delta_mc``.
      tradeoff_analytic, tradeoff_mc: (fpr,) the tradeoff curves at ``privacy_mu``.
      tradeoff_se: (fpr,) bootstrap standard error of ``tradeoff_mc`` (50 resamples).
    """

    n: int
    t: int
    simulated: np.ndarray
    sizes: np.ndarray
    weights: np.ndarray
    delta_analytic: np.ndarray
    delta_mc: np.ndarray
    delta_se: np.ndarray
    tradeoff_analytic: np.ndarray
    tradeoff_mc: np.ndarray
    tradeoff_se: np.ndarray


class PrivacyStudy(NamedTuple):
    """Part 3: the grids, the un-amplified references and one panel per (n, t).

    Attributes:
      eps_grid: (eps,) the eps grid of the delta(eps) curves, evenly spaced from 0.
      eps_step: its spacing, the resolution of an eps read off it (0.01).
      eps_show: the eps at which the table reports delta (points of ``eps_grid``).
      fpr: (fpr,) type I errors of the tradeoff curves.
      delta_plain: (mu, eps) delta(eps) of plain mu-GDP (no amplification).
      tradeoff_plain: (fpr,) the tradeoff curve of plain ``privacy_mu``-GDP.
      eps_plain: (mu,) plain mu-GDP's eps at delta = 1e-5.
      panels: one :class:`PrivacyPanel` per (n, t), n major.
    """

    eps_grid: np.ndarray
    eps_step: float
    eps_show: tuple[float, ...]
    fpr: np.ndarray
    delta_plain: np.ndarray
    tradeoff_plain: np.ndarray
    eps_plain: tuple[float, ...]
    panels: tuple[PrivacyPanel, ...]


class AmplificationStudy(NamedTuple):
    """Everything the report reads: the validated configuration and the three parts.

    Attributes:
      mus: the per-round GDP budgets mu of the regret and privacy parts.
      experts: n of the regret and batch-size parts.
      horizon: T of the regret part; gap: its best expert's mean advantage.
      alpha: RW-AdaBatch's alpha.
      batch_horizon: the last round of the batch-size part; batch_runs: its runs per
        environment.
      privacy_experts, privacy_rounds: the (n, t) of the privacy part.
      privacy_mu: mu of the batch-size part and of the privacy plots (one of ``mus``).
      mc_runs: Monte Carlo runs of the privacy part.
      seeds: runs per mu of the regret part.
      data_label: what the verdicts were judged on (``"synthetic"``: simulated gains).
      data_text: the data in words (``ExperimentResult.data``).
      regret, batches, privacy: the three parts.
    """

    mus: tuple[float, ...]
    experts: int
    horizon: int
    gap: float
    alpha: float
    batch_horizon: int
    batch_runs: int
    privacy_experts: tuple[int, ...]
    privacy_rounds: tuple[int, ...]
    privacy_mu: float
    mc_runs: int
    seeds: int
    data_label: str
    data_text: str
    regret: RegretStudy
    batches: BatchStudy
    privacy: PrivacyStudy


DATA_TEXT = "synthetic gains (iid Bernoulli with one best expert; tied gains for the worst case)"


def _regret_study(ctx: RunContext, mus, n, horizon, gap, alpha) -> RegretStudy:
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
    return RegretStudy(
        checkpoints=tuple(checkpoints),
        regret_ftpl=best - np.asarray(ftpl, np.float64),
        regret_adabatch=best - np.asarray(ada["earned"], np.float64),
        batches=np.asarray(ada["batches"]),
        bound_ftpl=np.array([[float(regret_bound_ftpl(mu, t, n)) for t in checkpoints]
                             for mu in mus], np.float64),
        bound_adabatch=np.array([[float(regret_bound_adabatch(mu, t, n, alpha))
                                  for t in checkpoints] for mu in mus], np.float64),
    )


def _batch_study(ctx: RunContext, n, horizon, gaps, alpha, mu, runs) -> BatchStudy:
    rounds = _log_grid(10, horizon, 10)
    algo = rw_adabatch(AdaBatchConfig(n))
    params = adabatch_params(mu, alpha)
    sizes_rec = record.at_steps(rounds, lambda out: out.batch_size)
    envs = [("tied (worst case)", 0.0, equal_gains(ctx.key_for("tied-environment"), horizon, n))]
    for gap in gaps:
        envs.append(
            (f"gap {gap:g}", gap, bernoulli_gains(ctx.key_for(f"easy-{gap}"), horizon, n, gap))
        )
    grid, analytic_weights = worst_case_batch_distribution(jnp.asarray(rounds, float), n, alpha)
    sizes = []
    for name, _, gains in envs:
        sizes.append(np.asarray(ctx.simulate(
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
        ).record, np.float64))  # (runs, rounds)
    return BatchStudy(
        rounds=tuple(rounds), environments=tuple(e[0] for e in envs),
        gaps=tuple(e[1] for e in envs), sizes=tuple(sizes),
        analytic_sizes=np.asarray(grid, np.float64),
        analytic_weights=np.asarray(analytic_weights, np.float64),
    )


def _privacy_study(ctx: RunContext, mus, experts, rounds, alpha, mu_plot, runs) -> PrivacyStudy:
    eps_fine = np.linspace(0.0, 12.0, 1201)
    fpr = np.geomspace(1e-5, 1.0, 60)
    mus_j = jnp.asarray(mus, float)[:, None]
    eps_j = jnp.asarray(eps_fine, float)
    panels = []
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
        for n in experts:
            simulated = mc_runs[n]
            for b, t in enumerate(rounds):
                mc_sizes, mc_weights = empirical_batch_distribution(simulated[:, b], width=width)
                sizes, weights = worst_case_batch_distribution(float(t), n, alpha)
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
                panels.append(PrivacyPanel(
                    n=n, t=t, simulated=simulated[:, b], sizes=np.asarray(sizes),
                    weights=np.asarray(weights),
                    delta_analytic=np.asarray(batch_mixture_delta(mus_j, sizes, weights, eps_j),
                                              np.float64),
                    delta_mc=np.asarray(batch_mixture_delta(mus_j, mc_sizes, mc_weights, eps_j),
                                        np.float64),
                    delta_se=np.asarray(batch_mixture_delta_se(mus_j, mc_sizes, mc_weights,
                                                               eps_j, runs), np.float64),
                    tradeoff_analytic=np.asarray(batch_mixture_tradeoff(mu_plot, sizes, weights,
                                                                        fpr)),
                    tradeoff_mc=np.asarray(batch_mixture_tradeoff(mu_plot, mc_sizes, mc_weights,
                                                                  fpr)),
                    tradeoff_se=f_boot.std(0, ddof=1),
                ))
    return PrivacyStudy(
        eps_grid=eps_fine, eps_step=0.01, eps_show=(0.5, 1.0, 2.0), fpr=fpr,
        # the un-amplified references do not depend on (n, t): computed once
        delta_plain=np.asarray(gdp_delta(mus_j, eps_j), np.float64),
        tradeoff_plain=np.asarray(gdp_tradeoff(mu_plot, fpr)),
        eps_plain=tuple(float(gdp_epsilon(mu, 1e-5)) for mu in mus),
        panels=tuple(panels),
    )


def study(ctx: RunContext) -> AmplificationStudy:
    """Run the three parts (regret, batch sizes, privacy of round t) of one configuration."""
    cfg = ctx.config
    mus = tuple(float(m) for m in cfg["mu"])
    alpha = float(cfg["alpha"])
    n = int(cfg["experts"])
    adabatch_params(np.asarray(mus), alpha)  # validates mu and alpha
    if cfg["privacy_mu"] not in mus:
        raise ValueError(f"privacy_mu must be one of mu={mus}; got {cfg['privacy_mu']}")
    horizon, gap = int(cfg["horizon"]), float(cfg["gap"])
    batch_horizon, batch_runs = int(cfg["batch_horizon"]), int(cfg["batch_runs"])
    privacy_experts = tuple(int(x) for x in cfg["privacy_experts"])
    privacy_rounds = tuple(int(x) for x in cfg["privacy_rounds"])
    privacy_mu, mc_runs = float(cfg["privacy_mu"]), int(cfg["mc_runs"])
    return AmplificationStudy(
        mus=mus, experts=n, horizon=horizon, gap=gap, alpha=alpha, batch_horizon=batch_horizon,
        batch_runs=batch_runs, privacy_experts=privacy_experts, privacy_rounds=privacy_rounds,
        privacy_mu=privacy_mu, mc_runs=mc_runs, seeds=int(ctx.num_seeds), data_label="synthetic",
        data_text=DATA_TEXT,
        regret=_regret_study(ctx, mus, n, horizon, gap, alpha),
        batches=_batch_study(ctx, n, batch_horizon, tuple(cfg["easy_gaps"]), alpha, privacy_mu,
                             batch_runs),
        privacy=_privacy_study(ctx, mus, privacy_experts, privacy_rounds, alpha, privacy_mu,
                               mc_runs),
    )


# --------------------------------------------------------------------------- the report

__all__ = ["ANALYTIC_ENV", "DATA_TEXT", "PAPER_TITLE", "TAG", "AmplificationStudy", "BatchStudy", "PrivacyPanel", "PrivacyStudy", "RegretStudy", "study"]
