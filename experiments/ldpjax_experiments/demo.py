"""``demo``: a Gaussian-noise counter through the engine (the foundation's smoke test).

Each of T users releases one bit with the mu-GDP Gaussian mechanism (sensitivity 1); the server
sums the releases. The error of the private count after t steps is N(0, t / mu^2), so the RMSE
is sqrt(t) / mu: the table compares the simulated RMSE with that closed form for every mu and
checkpoint, with a 95% interval for the simulated value from the chi-square sampling error.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from ldpjax.demo.noisy_counter import counter_params, noisy_counter
from ldpjax.engine import product_grid, record
from ldpjax_experiments.base import Experiment, ExperimentResult, Option, RunContext, floats
from ldpjax_experiments.plotting import (
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
from ldpjax_experiments.verdicts import judge, summary_lines


class DemoStudy(NamedTuple):
    """What the demo measured: everything :func:`report` reads (no run context).

    Fields:
      mus: the privacy levels mu, validated (each in (0, inf]; inf releases the exact count).
      horizon: the number of steps T (one user's bit per step).
      rate: the probability that a user's bit is 1 (validated, in [0, 1]).
      checkpoints: the steps t at which the error was recorded (ascending, each in [1, T]).
      num_seeds: the number of runs n per mu (the runs of every mu share their keys).
      rmse: (len(mus), len(checkpoints)) simulated RMSE of the released count at step t over
        the n runs, sqrt(mean_seeds error^2) (in counts).
      chunks_computed: chunks the engine computed for this run (the rest were loaded).
      chunks_loaded: chunks loaded from an earlier run's checkpoints.
      data_label: what the verdicts were judged on (``"synthetic"``: the demo's own bits).
      data: the data in words (``ExperimentResult.data``).
    """

    mus: tuple[float, ...]
    horizon: int
    rate: float
    checkpoints: tuple[int, ...]
    num_seeds: int
    rmse: np.ndarray
    chunks_computed: int
    chunks_loaded: int
    data_label: str = "synthetic"
    data: str = "synthetic Bernoulli bits (no data files)"


def checkpoints_of(horizon: int) -> tuple[int, ...]:
    """The recorded steps: T/100, T/10, T/4, T/2 and T (integer division, at least 1, unique).

    Example:
      >>> checkpoints_of(1000)
      (10, 100, 250, 500, 1000)
    """
    return tuple(sorted({max(1, int(horizon) // d) for d in (100, 10, 4, 2, 1)}))


def study(ctx: RunContext) -> DemoStudy:
    """Run the counter for every mu in one jitted sweep and measure the RMSE per checkpoint."""
    mus = tuple(ctx.config["mu"])
    horizon = int(ctx.config["horizon"])
    checkpoints = checkpoints_of(horizon)
    counter_params(np.asarray(mus), ctx.config["rate"])  # validates every mu and the rate
    params = product_grid(counter_params(1.0, ctx.config["rate"]), mu=list(mus))
    result = ctx.simulate(
        noisy_counter(),
        params,
        horizon,
        grid_ndim=1,
        record=record.at_steps(list(checkpoints), select=lambda out: out.error),
        label="counter",
        keep_state=False,
    )
    errors = result.record  # (mu, seed, checkpoint)
    rmse = np.array([[float(np.sqrt(np.mean(errors[i, :, j] ** 2)))
                      for j in range(len(checkpoints))] for i in range(len(mus))], np.float64)
    return DemoStudy(mus, horizon, float(ctx.config["rate"]), checkpoints, int(ctx.num_seeds),
                     rmse, int(result.info["chunks_computed"]), int(result.info["chunks_loaded"]))


def rows_of(s: DemoStudy) -> list[dict]:
    """The ``rmse`` table: per (mu, t) the simulated RMSE, sqrt(t)/mu, their ratio and the
    pointwise 95% interval of the ratio, sqrt(1 -+ 1.96 sqrt(2/n)) (CLT on the chi-square MSE).

    Example:
      >>> s = DemoStudy((2.0,), 4, 0.5, (4,), 200, np.array([[1.1]]), 1, 0)
      >>> round(rows_of(s)[0]["ratio"], 6)  # 1.1 / (sqrt(4) / 2)
      1.1
    """
    n = s.num_seeds
    rows = []
    for i, mu in enumerate(s.mus):
        for j, t in enumerate(s.checkpoints):
            rmse = float(s.rmse[i, j])
            theory = math.sqrt(t) / mu
            # RMSE^2 * n / sigma^2 ~ chi2_n: +-1.96 sqrt(2/n) relative on the MSE (CLT).
            half = 1.96 * math.sqrt(2.0 / n)
            rows.append(
                {
                    "mu": mu,
                    "t": t,
                    "rmse": rmse,
                    "rmse_theory": theory,
                    # mu = inf: no noise, RMSE and its closed form are both 0 (ratio 1)
                    "ratio": rmse / theory if theory > 0 else (1.0 if rmse == 0 else math.inf),
                    "ratio_lo95": math.sqrt(max(0.0, 1 - half)),
                    "ratio_hi95": math.sqrt(1 + half),
                }
            )
    return rows


def report(s: DemoStudy) -> ExperimentResult:
    """The table, verdicts, figure and summary of a study (pure: no keys, no JAX, no files).

    Example:
      >>> s = DemoStudy((2.0,), 4, 0.5, (1, 4), 200, np.array([[0.5, 1.0]]), 1, 0)
      >>> [v.status for v in report(s).verdicts]
      ['reproduced']
    """
    rows = rows_of(s)
    n = s.num_seeds
    verdicts = _verdicts(rows, s.mus, s.checkpoints, n, s.data_label)
    fig = _figure(rows, s.mus, s.checkpoints, n, s.rate)
    summary = (
        f"Private counting with the Gaussian mechanism over T={s.horizon} steps, "
        f"mu in {list(s.mus)}, {n} seeds per mu, one jitted sweep "
        f"({s.chunks_computed} chunk(s) computed, {s.chunks_loaded} "
        f"loaded).\n" + summary_lines(verdicts)
    )
    return ExperimentResult(
        tables={"rmse": rows},
        figures={"rmse": fig},
        summary=summary,
        data=s.data,
        verdicts=tuple(verdicts),
    )


def run(ctx: RunContext) -> ExperimentResult:
    """``report(study(ctx))``."""
    return report(study(ctx))


def _band(n: int, cells: int) -> float:
    """Half-width of the simultaneous 95% band on RMSE / (sqrt(t)/mu) over ``cells`` cells.

    n * MSE / sigma^2 ~ chi2_n, so RMSE / sigma = sqrt(chi2_n / n) ~ 1 + N(0, 1 / (2n)) (delta
    method); Bonferroni over the cells gives z = Phi^-1(1 - 0.025 / cells).
    """
    z = NormalDist().inv_cdf(1 - 0.025 / max(cells, 1))
    return z * math.sqrt(1.0 / (2.0 * n))


def _verdicts(rows, mus, checkpoints, n, data="synthetic"):
    """The demo's checks: one over every finite (mu, t) cell (the worst cell's ratio), one for
    mu = inf. One check per mu would repeat one number: the runs of every mu share their keys,
    so the noise is the same standard normal draw scaled by 1/mu and RMSE/(sqrt(t)/mu) is
    identical across mu."""
    cells = len(mus) * len(checkpoints)
    tol = _band(n, cells)
    out = []
    finite = [r for r in rows if math.isfinite(r["mu"])]
    if finite:
        worst = max(finite, key=lambda r: abs(r["ratio"] - 1))
        out.append(judge(
            "demo", f"RMSE = sqrt(t)/mu at every checkpoint and mu in "
            f"{[m for m in mus if math.isfinite(m)]}", worst["ratio"], 1.0, tol,
            reference="closed form", kind="demo", data=data,
            measure=f"simulated RMSE / (sqrt(t)/mu) in the worst (mu, t) cell (mu = "
            f"{worst['mu']:g}, t = {worst['t']}), unitless",
            tolerance_note=f"simultaneous 95% band: z sqrt(1/(2n)), n = {n} seeds, Bonferroni "
            f"over {cells} (mu, t) cells"))
    exact = [r for r in rows if not math.isfinite(r["mu"])]
    if exact:
        out.append(judge(
            "demo", "mu = inf releases the exact count", max(r["rmse"] for r in exact), 0.0,
            0.0, reference="closed form", kind="demo", data=data,
            measure="largest RMSE of the released count at mu = inf over t (counts)",
            tolerance_note="no noise: exact"))
    return out


def _figure(rows, mus, checkpoints, n, rate):
    fig, axes = figure(2, 1, width=4.2)
    ax, bx = axes[0, 0], axes[0, 1]
    finite = [mu for mu in mus if math.isfinite(mu)]  # mu = inf: RMSE 0, no place on log axes
    ts = np.asarray(checkpoints, float)
    half = _band(n, len(mus) * len(checkpoints))
    for k, mu in enumerate(finite):
        sel = [r for r in rows if r["mu"] == mu]
        color, marker = PALETTE[k % len(PALETTE)], MARKERS[k % len(MARKERS)]
        rmse = np.array([r["rmse"] for r in sel])
        # standard error of an RMSE from n seeds: RMSE * sqrt(1 / (2n)) (delta method)
        label = f"mu = {mu:g}: simulated (+-{SE_MULT:g} SE bars)"
        mean_bars(ax, ts, rmse, rmse * math.sqrt(1 / (2 * n)), label=label, color=color,
                  marker=marker, ls="none", log=True)
        ax.plot(ts, np.sqrt(ts) / mu, "-", color=color, lw=1, label=f"mu = {mu:g}: sqrt(t)/mu")
        ratio = np.array([r["ratio"] for r in sel])
        offset = 1 + 0.04 * (k - (len(finite) - 1) / 2)
        # the same points as in the left panel (same colour and marker, same legend entry)
        bx.plot(ts * offset, ratio, marker=marker, ls="none", color=color, label=label,
                markersize=4)
    bx.axhline(1.0, color="black", lw=0.8)
    bx.axhspan(1 - half, 1 + half, color="grey", alpha=0.2, lw=0,
               label="right: simultaneous 95% band on the ratio")
    for a in (ax, bx):
        a.set_xscale("log")
        a.set_xlabel("steps t")
    ax.set_yscale("log")
    ax.set_ylabel("RMSE of the private count")
    ax.set_title("simulated RMSE vs sqrt(t)/mu")
    bx.set_ylabel("RMSE / (sqrt(t)/mu)")
    bx.set_title("ratio to the closed form")
    ratios = [r["ratio"] for r in rows if math.isfinite(r["mu"])]
    fit_ylim(bx, [ratios, [1 - half, 1 + half]])
    # One legend below both panels (inside either it covers the t = 10 points), made of the
    # drawn artists themselves (deduplicated by label: the ratio points share their entry).
    figure_legend(fig, axes, ncols=min(2 * len(finite) + 1, 3))
    caption(fig, data=f"synthetic Bernoulli({rate:g}) bits, no data file",
            unit="one user's bit (one Gaussian release, sensitivity 1, mu-GDP)",
            note=f"{n} seeds per mu; {se_note('error bars')} Right: the same simulated points "
            "divided by sqrt(t)/mu, offset slightly in t so that coinciding points stay visible."
            + ("" if len(finite) == len(mus) else " mu = inf (RMSE 0) is not drawn."),
            title="Gaussian-noise counter through the engine (demo)")
    return fig


EXPERIMENT = Experiment(
    name="demo",
    description="Gaussian-noise counter through the engine (RMSE vs sqrt(t)/mu)",
    run=run,
    options=(
        Option("mu", floats, (0.5, 1.0, 2.0, 4.0), "privacy levels mu (comma-separated)"),
        Option("horizon", int, 1000, "number of steps T"),
        Option("rate", float, 0.5, "probability that a user's bit is 1"),
    ),
    sizes={"small": {"seeds": 1000}, "paper": {"seeds": 100000, "horizon": 10000}},
    order=0,
    cost=2,
)

__all__ = ["EXPERIMENT", "DemoStudy", "checkpoints_of", "report", "rows_of", "run", "study"]
