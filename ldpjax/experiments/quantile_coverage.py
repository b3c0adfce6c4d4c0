"""``quantile-coverage``: the paper's Hete-L table (paper 001, Sec. 4; spec ``quantile.md``).

K = 10 clients with p_k = 1/K and locations N(0, 1) (by default the ten N(0, 1) draws of the
authors' code, NumPy seed 42, so Q* and the Theorem 3.1 variance match the paper's setting;
``--locations key`` draws them from this run's key instead), unit-scale data of one family
(normal; ``--size paper`` adds uniform, Cauchy and Laplace), tau in {0.3, 0.8}, privacy
r in {hetero = linspace(0.25, 0.9, K), 0.9 for all}, budgets t_T samples per client.
Methods: Local SGD with C1 / C5 / Log schedules, DP-SGD (Gaussian, C1), DC and Single. For each
(distribution, t_T, method) the whole (tau x r) grid and all replications are one jitted
``simulate`` call. Metrics: ECP (fraction of 95% self-normalised CIs covering Q*), MAE, mean
CI length, next to the paper's ECP (MAE) where the paper reports them, and the Theorem 3.1
standard deviation sigma / sqrt(t_T).

Plots: ECP and MAE against the budget (the checkpoints of the longest run: for C1, DC, Single
and DP-SGD the first n samples of a run are exactly a run with budget n; for C5/Log up to the
round boundary), and ECP / MAE against a common r (every method at the smallest budget,
tau = the first tau).

Small size (default): normal data, t_T in {2000, 10000}, 100 replications (about two minutes
on two CPU cores, most of it compilation). Paper size: 1000 replications, t_T in
{10000, 50000}, four distributions (hours on a CPU; minutes on a GPU).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from ldpjax.engine import product_grid, record
from ldpjax.experiments.base import (
    Experiment,
    ExperimentResult,
    Option,
    RunContext,
    floats,
    ints,
    strs,
)
from ldpjax.plotting import figure

# The ten N(0, 1) client locations of the authors' code (numpy.random.seed(42); randn(10)).
AUTHORS_LOCATIONS = (
    0.4967141530112327, -0.13826430117118466, 0.6476885381006925, 1.5230298564080254,
    -0.23415337472333597, -0.23413695694918055, 1.5792128155073915, 0.7674347291529088,
    -0.4694743859349521, 0.5425600435859647,
)

# Paper 001, Hete-L table (normal data, 95% nominal): (t_T, tau, r) -> method -> (ECP, MAE).
PAPER_TABLE = {
    (10000, 0.3, "hetero"): {"C1": (0.949, 0.0096), "DP-SGD": (0.947, 0.0142), "DC": (0.898, 0.1302), "Single": (0.954, 0.0095)},
    (10000, 0.8, "hetero"): {"C1": (0.962, 0.0122), "DP-SGD": (0.943, 0.0186), "DC": (0.709, 0.2684), "Single": (0.958, 0.0114)},
    (10000, 0.8, "0.9"): {"C1": (0.990, 0.0042), "DP-SGD": (0.968, 0.0065), "DC": (0.049, 0.2098), "Single": (0.966, 0.0067)},
    (50000, 0.3, "hetero"): {"C1": (0.911, 0.0056), "DP-SGD": (0.885, 0.0083), "DC": (0.093, 0.1282), "Single": (0.958, 0.0038)},
}

METHODS = ("C1", "C5", "Log", "DP-SGD", "DC", "Single")


def rate_vector(name: str, num_clients: int) -> np.ndarray:
    """'hetero' -> linspace(0.25, 0.9, K); a number -> that rate for every client."""
    if name == "hetero":
        return np.linspace(0.25, 0.9, num_clients)
    try:
        value = float(name)
    except ValueError:
        raise ValueError(f"rates must be 'hetero' or numbers in (0, 1]; got {name!r}") from None
    if not 0 < value <= 1:
        raise ValueError(f"rates must be 'hetero' or numbers in (0, 1]; got {name!r}")
    return np.full(num_clients, value)


def method_setup(method: str, budget: int):
    """(algorithm, engine steps, engine step index of each sample checkpoint function)."""
    from ldpjax import quantile as Q

    if method in ("C1", "C5", "Log"):
        config = Q.LocalSGDConfig(budget, Q.schedules.by_name(method))
        return Q.local_sgd(config), config.num_rounds, config.rounds_for_samples
    if method == "DP-SGD":
        config = Q.LocalSGDConfig(budget, Q.C1)
        return Q.dp_sgd(config), config.num_rounds, config.rounds_for_samples
    if method == "DC":
        return Q.divide_and_conquer(Q.DivideAndConquerConfig(budget)), budget, _identity_steps
    if method == "Single":
        return Q.single(Q.SingleConfig(budget)), budget, _identity_steps
    raise ValueError(f"methods must be among {METHODS}; got {method!r}")


def _identity_steps(samples):
    return [int(n) for n in np.atleast_1d(samples)]


def _select(out):
    return (out.estimate, out.variance)


def client_locations(ctx: RunContext, num_clients: int) -> np.ndarray:
    if ctx.config["locations"] == "authors":
        if num_clients != len(AUTHORS_LOCATIONS):
            raise ValueError(
                f"locations 'authors' needs clients = {len(AUTHORS_LOCATIONS)}; got {num_clients} "
                "(use --locations key)"
            )
        return np.asarray(AUTHORS_LOCATIONS)
    return np.asarray(jax.random.normal(ctx.key_for("locations"), (num_clients,)), np.float64)


def summarise(estimate, variance, truth, z) -> dict:
    half = z * np.sqrt(np.maximum(variance, 0.0))
    covered = np.abs(estimate - truth) <= half
    n = estimate.size
    ecp = float(np.mean(covered))
    return {
        "ecp": ecp,
        "ecp_se": math.sqrt(max(ecp * (1 - ecp), 1e-12) / n),
        "mae": float(np.mean(np.abs(estimate - truth))),
        "rmse": float(np.sqrt(np.mean((estimate - truth) ** 2))),
        "ci_length": float(np.mean(2 * half)),
    }


def run(ctx: RunContext) -> ExperimentResult:
    from ldpjax import quantile as Q

    cfg = ctx.config
    k = int(cfg["clients"])
    if k < 1:
        raise ValueError(f"clients (K) must be an integer >= 1; got {k}")
    taus = [float(t) for t in cfg["taus"]]
    rate_names = list(cfg["rates"])
    rates = [rate_vector(name, k) for name in rate_names]
    budgets = sorted(int(b) for b in cfg["budgets"])
    methods = list(cfg["methods"])
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"methods must be among {METHODS}; got {m!r}")
    level = float(cfg["level"])
    z = Q.critical_value(level)
    locations = client_locations(ctx, k)
    n = ctx.num_seeds
    rows, curves, sweep_rows = [], [], []
    recorders = {}
    for dist in cfg["distributions"]:
        clients = Q.make_clients(dist, loc=locations)
        base = Q.quantile_params(taus[0], rates[0], clients, lr_scale=cfg["lr_scale"])
        grid = product_grid(base, tau=taus, r=rates)
        q_star = np.asarray(Q.global_quantile(np.asarray(taus), clients))
        sigma = np.array([[float(Q.clients_asymptotic_variance(t, r, clients)) for r in rates] for t in taus]) ** 0.5
        for budget in budgets:
            checkpoints = sorted({max(1, budget // d) for d in (16, 8, 4, 2, 1)})
            for method in methods:
                algorithm, steps, steps_for = method_setup(method, budget)
                marks = steps_for(checkpoints)
                unique = sorted(set(marks))
                if (budget, method) not in recorders:
                    recorders[(budget, method)] = record.at_steps(unique, _select)
                result = ctx.simulate(
                    algorithm, grid, steps, label=f"{dist}-t{budget}-{method}", grid_ndim=2,
                    key=ctx.key_for(f"{dist}-t{budget}"), keep_state=False,
                    record=recorders[(budget, method)],
                )
                estimate, variance = result.record  # (tau, r, seed, checkpoint)
                for i, tau in enumerate(taus):
                    for j, rname in enumerate(rate_names):
                        stats = summarise(estimate[i, j, :, -1], variance[i, j, :, -1], q_star[i], z)
                        paper = PAPER_TABLE.get((budget, tau, rname), {}).get(method) if dist == "normal" else None
                        rows.append({
                            "distribution": dist, "t_T": budget, "tau": tau, "r": rname,
                            "method": method, **stats,
                            "theory_sd": float(sigma[i, j] / math.sqrt(budget)),
                            "paper_ecp": paper[0] if paper else None,
                            "paper_mae": paper[1] if paper else None,
                            "q_star": float(q_star[i]),
                        })
                        if budget == budgets[-1]:
                            for samples, mark in zip(checkpoints, marks, strict=True):
                                c = unique.index(mark)
                                s = summarise(estimate[i, j, :, c], variance[i, j, :, c], q_star[i], z)
                                curves.append({"distribution": dist, "tau": tau, "r": rname, "method": method,
                                               "samples": samples, **s})
        # ECP / MAE against a common r (smallest budget, first tau). The recorder of the main
        # run at that budget is reused: with as many sweep rates as (tau, r) grid points the
        # compiled kernels are reused too (compilation dominates small runs on a CPU).
        sweep = [float(x) for x in cfg["sweep_rates"]]
        if sweep:
            budget = budgets[0]
            sweep_grid = product_grid(base, r=[np.full(k, x) for x in sweep])
            sweep_sigma = [float(Q.clients_asymptotic_variance(taus[0], x, clients)) ** 0.5 for x in sweep]
            for method in methods:
                algorithm, steps, _ = method_setup(method, budget)
                result = ctx.simulate(
                    algorithm, sweep_grid, steps, label=f"{dist}-sweep-t{budget}-{method}", grid_ndim=1,
                    key=ctx.key_for(f"{dist}-sweep-t{budget}"), keep_state=False,
                    record=recorders[(budget, method)],
                )
                estimate, variance = (x[..., -1] for x in result.record)
                for j, x in enumerate(sweep):
                    s = summarise(estimate[j], variance[j], q_star[0], z)
                    sweep_rows.append({"distribution": dist, "t_T": budget, "tau": taus[0], "r": x,
                                       "method": method, **s,
                                       "theory_sd": sweep_sigma[j] / math.sqrt(budget)})

    figures = {
        "coverage_mae_vs_budget": _budget_figure(curves, taus, rate_names, methods, level),
        "coverage_mae_vs_r": _rate_figure(sweep_rows, methods, level),
    }
    summary = _summary(rows, n, budgets, level)
    return ExperimentResult(
        tables={"hete_l": rows, "by_budget": curves, "by_rate": sweep_rows},
        figures=figures,
        summary=summary,
        data=(
            f"synthetic: K={k} clients, locations {cfg['locations']} "
            f"({', '.join(f'{x:.3f}' for x in locations)}), unit scale, "
            f"distributions {list(cfg['distributions'])}"
        ),
        extra={"critical_value": z, "locations": locations.tolist()},
    )


def _budget_figure(curves, taus, rate_names, methods, level):
    panels = [(t, r) for t in taus for r in rate_names]
    fig, axes = figure(len(panels), 2)
    dist = curves[0]["distribution"] if curves else "normal"
    for c, (tau, rname) in enumerate(panels):
        for method in methods:
            pts = [p for p in curves if p["distribution"] == dist and p["tau"] == tau and p["r"] == rname and p["method"] == method]
            xs = [p["samples"] for p in pts]
            axes[0, c].plot(xs, [p["ecp"] for p in pts], "o-", label=method, markersize=3)
            axes[1, c].plot(xs, [p["mae"] for p in pts], "o-", label=method, markersize=3)
        axes[0, c].axhline(level, color="k", linewidth=0.8, linestyle="--")
        axes[0, c].set_title(f"{dist}, tau={tau}, r={rname}", fontsize=9)
        axes[0, c].set_ylim(-0.02, 1.02)
        for row in range(2):
            axes[row, c].set_xscale("log")
            axes[row, c].set_xlabel("t_T (samples per client)")
        axes[1, c].set_yscale("log")
    axes[0, 0].set_ylabel(f"coverage of {level:.0%} CI")
    axes[1, 0].set_ylabel("MAE")
    axes[0, 0].legend(fontsize=7)
    return fig


def _rate_figure(sweep_rows, methods, level):
    fig, axes = figure(2, 1)
    if sweep_rows:
        dist = sweep_rows[0]["distribution"]
        for method in methods:
            pts = [p for p in sweep_rows if p["method"] == method and p["distribution"] == dist]
            axes[0, 0].plot([p["r"] for p in pts], [p["ecp"] for p in pts], "o-", label=method, markersize=3)
            axes[0, 1].plot([p["r"] for p in pts], [p["mae"] for p in pts], "o-", label=method, markersize=3)
        pts = [p for p in sweep_rows if p["method"] == methods[0] and p["distribution"] == dist]
        axes[0, 1].plot([p["r"] for p in pts], [p["theory_sd"] * math.sqrt(2 / math.pi) for p in pts],
                        "k--", label="Thm 3.1 (C1 MAE)")
        axes[0, 0].axhline(level, color="k", linewidth=0.8, linestyle="--")
        axes[0, 0].set_title(f"{dist}, tau={pts[0]['tau'] if pts else ''}, t_T={pts[0]['t_T'] if pts else ''}", fontsize=9)
        axes[0, 1].set_yscale("log")
    axes[0, 0].set_xlabel("common r (truthful-response rate)")
    axes[0, 1].set_xlabel("common r (truthful-response rate)")
    axes[0, 0].set_ylabel(f"coverage of {level:.0%} CI")
    axes[0, 1].set_ylabel("MAE")
    axes[0, 0].set_ylim(-0.02, 1.02)
    axes[0, 1].legend(fontsize=7)
    return fig


def _summary(rows, n, budgets, level):
    def pick(method, **kw):
        return [r for r in rows if r["method"] == method and all(r[k] == v for k, v in kw.items())]

    parts = [f"Hete-L table with {n} replications per cell, t_T in {budgets}, nominal {level:.0%}."]
    normal = [r for r in rows if r["distribution"] == "normal"]
    if normal:
        federated = sorted({r["method"] for r in normal} & {"C1", "C5", "Log", "DP-SGD"})
        for method in ("C1", "DP-SGD", "DC", "Single"):
            sel = pick(method, distribution="normal")
            if sel:
                parts.append(
                    f"{method}: ECP {min(r['ecp'] for r in sel):.3f}-{max(r['ecp'] for r in sel):.3f}, "
                    f"MAE {min(r['mae'] for r in sel):.4f}-{max(r['mae'] for r in sel):.4f}."
                )
        best = {}
        for r in normal:
            key = (r["t_T"], r["tau"], r["r"])
            if r["method"] in federated and (key not in best or r["mae"] < best[key][1]):
                best[key] = (r["method"], r["mae"])
        wins = sum(1 for m, _ in best.values() if m == "C1")
        parts.append(f"C1 has the smallest MAE among the federated methods in {wins} of {len(best)} cells.")
    return " ".join(parts)


EXPERIMENT = Experiment(
    name="quantile-coverage",
    description="Federated LDP quantile inference: Hete-L coverage/MAE table (paper 001)",
    run=run,
    options=(
        Option("distributions", strs, ("normal",), "client data families (normal,uniform,cauchy,laplace)"),
        Option("budgets", ints, (2000, 10000), "t_T values, samples per client"),
        Option("taus", floats, (0.3, 0.8), "quantile levels"),
        Option("rates", strs, ("hetero", "0.9"), "privacy settings: 'hetero' or a common r"),
        Option("methods", strs, METHODS, "methods: C1,C5,Log,DP-SGD,DC,Single"),
        Option("clients", int, 10, "number of clients K"),
        Option("locations", str, "authors", "client locations: 'authors' (seed-42 draws) or 'key'",
               choices=("authors", "key")),
        Option("lr_scale", float, 20.0, "learning-rate constant c0 in c0/(m^0.51 + 100)"),
        Option("level", float, 0.95, "nominal CI level"),
        Option("sweep_rates", floats, (0.25, 0.5, 0.75, 1.0), "common r values for the vs-r plot"),
    ),
    sizes={
        "small": {"seeds": 100},
        "paper": {
            "seeds": 1000,
            "budgets": (10000, 50000),
            "distributions": ("normal", "uniform", "cauchy", "laplace"),
        },
    },
    order=50,
)
