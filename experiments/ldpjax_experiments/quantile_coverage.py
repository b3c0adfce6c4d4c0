"""``quantile-coverage``: the Hete-L table of *Federated Learning of Quantile Inference under
Local Differential Privacy* (Sec. 4).

K = 10 clients with p_k = 1/K and locations N(0, 1) (by default the ten N(0, 1) draws of the
authors' code, NumPy seed 42, so Q* and the Theorem 3.1 variance match the paper's setting;
``--locations key`` draws them from this run's key instead), unit-scale data of one family
(normal; ``--size paper`` adds uniform, Cauchy and Laplace), tau in {0.3, 0.8}, privacy
r in {hetero = linspace(0.25, 0.9, K), 0.9 for all}, budgets t_T samples per client.
Methods: Local SGD with C1 / C5 / Log schedules, DP-SGD (pure eps_k-LDP Laplace noise, C1), DC
(the authors' step constant c0 = 2) and Single. For each
(distribution, t_T, method) the whole (tau x r) grid and all replications are one jitted
``simulate`` call. Metrics: ECP (fraction of 95% self-normalised CIs covering Q*), MAE, mean
CI length, next to the paper's ECP (MAE) where the paper reports them, and the Theorem 3.1
standard deviation sigma / sqrt(t_T).

Plots: ECP and MAE against the budget (the checkpoints of the longest run: for C1, DC, Single
and DP-SGD the first n samples of a run are exactly a run with budget n; for C5/Log up to the
round boundary), and ECP / MAE against a common r (every method at the smallest budget,
tau = the first tau).

Small size (default): normal data, t_T in {2000, 10000}, 100 replications (most of its time
is compilation). Paper size: 1000 replications, t_T in {10000, 50000}, four distributions
(sized for a GPU).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import product_grid, record
from ldpjax.quantile.divide_and_conquer import DC_LR_SCALE  # DC's step constant: one home
from ldpjax_experiments.base import (
    Experiment,
    ExperimentResult,
    Option,
    RunContext,
    floats,
    ints,
    strs,
)
from ldpjax_experiments.kit import PAPER_TITLES, series_style
from ldpjax_experiments.plotting import (
    caption,
    coverage_axis,
    coverage_axis_note,
    figure,
    figure_legend,
    fit_ylim,
    mean_bars,
    paper_markers,
    se_note,
)
from ldpjax_experiments.verdicts import judge, judge_condition, summary_lines, with_data

# The ten N(0, 1) client locations of the authors' code (numpy.random.seed(42); randn(10)).
AUTHORS_LOCATIONS = (
    0.4967141530112327, -0.13826430117118466, 0.6476885381006925, 1.5230298564080254,
    -0.23415337472333597, -0.23413695694918055, 1.5792128155073915, 0.7674347291529088,
    -0.4694743859349521, 0.5425600435859647,
)

# The paper's Hete-L table (normal data, 95% nominal): (t_T, tau, r) -> method -> (ECP, MAE).
PAPER_TABLE = {
    (10000, 0.3, "hetero"): {"C1": (0.949, 0.0096), "DP-SGD": (0.947, 0.0142), "DC": (0.898, 0.1302), "Single": (0.954, 0.0095)},
    (10000, 0.8, "hetero"): {"C1": (0.962, 0.0122), "DP-SGD": (0.943, 0.0186), "DC": (0.709, 0.2684), "Single": (0.958, 0.0114)},
    (10000, 0.8, "0.9"): {"C1": (0.990, 0.0042), "DP-SGD": (0.968, 0.0065), "DC": (0.049, 0.2098), "Single": (0.966, 0.0067)},
    (50000, 0.3, "hetero"): {"C1": (0.911, 0.0056), "DP-SGD": (0.885, 0.0083), "DC": (0.093, 0.1282), "Single": (0.958, 0.0038)},
}

METHODS = ("C1", "C5", "Log", "DP-SGD", "DC", "Single")

PAPER_TITLE = PAPER_TITLES["001"]

#: Relative shift in t_T between methods in the budget figure (points and stars alike).
METHOD_OFFSET = 0.05


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


def method_hints(method: str):
    """The engine's execution hints for ``method`` (DP-SGD's elemental emitters; defaults)."""
    from ldpjax import quantile as Q
    from ldpjax.engine import ExecutionHints

    return Q.DP_SGD_HINTS if method == "DP-SGD" else ExecutionHints()


def method_params(method: str, base, cfg):
    """The params of one method: DC takes its own step constant (a params leaf)."""
    if method == "DC":
        return base._replace(lr_scale=jnp.asarray(cfg["dc_lr_scale"], base.lr_scale.dtype))
    return base


def fixed_data_params(ctx, base, clients, budget: int, dist: str):
    """``--fixed-data``: one dataset of ``budget`` records per client, drawn once (public key
    ``data-<dist>-t<budget>``) and shared by every replication, as the authors' code does. Each
    replication reads the records in its own random order, once each (records clients): the
    results condition on that dataset, so only the privatisation noise (and the order) varies."""
    from ldpjax import quantile as Q

    draws = np.asarray(Q.sample(ctx.key_for(f"data-{dist}-t{budget}"), clients, (budget,)))
    return base._replace(clients=Q.record_clients(list(draws.T)))


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


def summarise(estimate, variance, truth, level) -> dict:
    """ECP (with its binomial SE), MAE (with its SE), RMSE and mean length of the
    self-normalised CIs from :func:`ldpjax.quantile.confidence_interval`."""
    from ldpjax.quantile import confidence_interval

    estimate = np.asarray(estimate, np.float64)
    lo, hi = (np.asarray(b, np.float64) for b in
              confidence_interval(estimate, np.maximum(np.asarray(variance, np.float64), 0.0), level))
    covered = (lo <= truth) & (truth <= hi)
    n = estimate.size
    ecp = float(np.mean(covered))
    err = np.abs(estimate - truth)
    return {
        "ecp": ecp,
        "ecp_se": math.sqrt(ecp * (1 - ecp) / n),
        "mae": float(np.mean(err)),
        "mae_se": float(np.std(err, ddof=1) / math.sqrt(n)) if n > 1 else 0.0,
        "rmse": float(np.sqrt(np.mean((estimate - truth) ** 2))),
        "ci_length": float(np.mean(hi - lo)),
    }


class Setting(NamedTuple):
    """The validated grid of one run: K, the (tau x r) grid, the budgets, the methods, the level."""

    clients: int
    taus: list[float]
    rate_names: list[str]
    rates: list[np.ndarray]
    budgets: list[int]
    methods: list[str]
    level: float


class CoverageStudy(NamedTuple):
    """What the study measured (one row per cell); :func:`report` reads only this.

    Attributes:
      setting: the validated grid (K, taus, r settings, budgets, methods, level).
      rows: one per (distribution, t_T, method, tau, r) at the full budget, beside the paper's
        ECP (MAE) where it reports them (keys: :func:`summarise`'s, ``theory_sd``,
        ``paper_ecp``, ``paper_mae``, ``q_star``).
      curves: the same metrics at the checkpoints (``samples``) of the largest budget.
      sweep_rows: the common-r sweep (smallest budget, first tau).
      locations: (client,) the clients' locations.
      critical_value: the self-normalised CI's critical value at the level.
      distributions: the data families run, in order.
      locations_source: ``"authors"`` (the seed-42 draws) or ``"key"`` (this run's key).
      fixed_data: one dataset per (distribution, t_T) shared by every replication.
      dc_lr_scale: DC's step constant c0.
      seeds: replications per cell.
      data_label: what the verdicts were judged on (``"synthetic"``: the paper's Hete-L
        study is a simulation, synthetic by design).
      data_text: the data in words (``ExperimentResult.data``).
      data_caption: the data as the figures' captions say it.
    """

    setting: Setting
    rows: list[dict]
    curves: list[dict]
    sweep_rows: list[dict]
    locations: np.ndarray
    critical_value: float
    distributions: tuple[str, ...]
    locations_source: str
    fixed_data: bool
    dc_lr_scale: float
    seeds: int
    data_label: str
    data_text: str
    data_caption: str


def parse_setting(cfg) -> Setting:
    """The run's grid from its options (``ValueError`` naming the option on bad input)."""
    k = int(cfg["clients"])
    if k < 1:
        raise ValueError(f"clients (K) must be an integer >= 1; got {k}")
    rate_names = list(cfg["rates"])
    rates = [rate_vector(name, k) for name in rate_names]
    methods = list(cfg["methods"])
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"methods must be among {METHODS}; got {m!r}")
    return Setting(
        clients=k, taus=[float(t) for t in cfg["taus"]], rate_names=rate_names, rates=rates,
        budgets=sorted(int(b) for b in cfg["budgets"]), methods=methods,
        level=float(cfg["level"]))


def _budget_cells(ctx, s: Setting, dist, clients, base, recorders):
    """Every (t_T, method) run of one distribution: the table rows and, at the largest budget,
    the checkpoint curves. Fills ``recorders`` (reused by the common-r sweep)."""
    from ldpjax import quantile as Q

    cfg = ctx.config
    q_star = np.asarray(Q.global_quantile(np.asarray(s.taus), clients))
    sigma = np.array([[float(Q.clients_asymptotic_variance(t, r, clients)) for r in s.rates]
                      for t in s.taus]) ** 0.5
    rows, curves = [], []
    for budget in s.budgets:
        checkpoints = sorted({max(1, budget // d) for d in (16, 8, 4, 2, 1)})
        data_base = fixed_data_params(ctx, base, clients, budget, dist) if cfg["fixed_data"] else base
        for method in s.methods:
            grid = product_grid(method_params(method, data_base, cfg), tau=s.taus, r=s.rates)
            algorithm, steps, steps_for = method_setup(method, budget)
            marks = steps_for(checkpoints)
            unique = sorted(set(marks))
            if (budget, method) not in recorders:
                recorders[(budget, method)] = record.at_steps(unique, _select)
            result = ctx.simulate(
                algorithm, grid, steps, label=f"{dist}-t{budget}-{method}", grid_ndim=2,
                key=ctx.key_for(f"{dist}-t{budget}"), keep_state=False,
                record=recorders[(budget, method)], hints=method_hints(method),
            )
            estimate, variance = result.record  # (tau, r, seed, checkpoint)
            for i, tau in enumerate(s.taus):
                for j, rname in enumerate(s.rate_names):
                    stats = summarise(estimate[i, j, :, -1], variance[i, j, :, -1], q_star[i], s.level)
                    paper = PAPER_TABLE.get((budget, tau, rname), {}).get(method) if dist == "normal" else None
                    rows.append({
                        "distribution": dist, "t_T": budget, "tau": tau, "r": rname,
                        "method": method, **stats,
                        "theory_sd": float(sigma[i, j] / math.sqrt(budget)),
                        "paper_ecp": paper[0] if paper else None,
                        "paper_mae": paper[1] if paper else None,
                        "q_star": float(q_star[i]),
                    })
                    if budget == s.budgets[-1]:
                        for samples, mark in zip(checkpoints, marks, strict=True):
                            c = unique.index(mark)
                            m = summarise(estimate[i, j, :, c], variance[i, j, :, c], q_star[i], s.level)
                            curves.append({"distribution": dist, "tau": tau, "r": rname,
                                           "method": method, "samples": samples, **m})
    return rows, curves


def _rate_sweep(ctx, s: Setting, dist, clients, base, recorders):
    """ECP / MAE against a common r (smallest budget, first tau). The recorder of the main run
    at that budget is reused: with as many sweep rates as (tau, r) grid points the compiled
    kernels are reused too (compilation dominates small runs on a CPU)."""
    from ldpjax import quantile as Q

    cfg = ctx.config
    sweep = [float(x) for x in cfg["sweep_rates"]]
    if not sweep:
        return []
    q_star = np.asarray(Q.global_quantile(np.asarray(s.taus), clients))
    budget = s.budgets[0]
    data_base = fixed_data_params(ctx, base, clients, budget, dist) if cfg["fixed_data"] else base
    sweep_sigma = [float(Q.clients_asymptotic_variance(s.taus[0], x, clients)) ** 0.5 for x in sweep]
    rows = []
    for method in s.methods:
        sweep_grid = product_grid(method_params(method, data_base, cfg),
                                  r=[np.full(s.clients, x) for x in sweep])
        algorithm, steps, _ = method_setup(method, budget)
        result = ctx.simulate(
            algorithm, sweep_grid, steps, label=f"{dist}-sweep-t{budget}-{method}", grid_ndim=1,
            key=ctx.key_for(f"{dist}-sweep-t{budget}"), keep_state=False,
            record=recorders[(budget, method)], hints=method_hints(method),
        )
        estimate, variance = (x[..., -1] for x in result.record)
        for j, x in enumerate(sweep):
            m = summarise(estimate[j], variance[j], q_star[0], s.level)
            rows.append({"distribution": dist, "t_T": budget, "tau": s.taus[0], "r": x,
                         "method": method, **m, "theory_sd": sweep_sigma[j] / math.sqrt(budget)})
    return rows


def study(ctx: RunContext) -> CoverageStudy:
    """Run every (distribution, t_T, method) cell and the common-r sweep."""
    from ldpjax import quantile as Q

    cfg = ctx.config
    s = parse_setting(cfg)
    z = Q.critical_value(s.level)
    locations = client_locations(ctx, s.clients)
    rows, curves, sweep_rows = [], [], []
    recorders = {}
    for dist in cfg["distributions"]:
        clients = Q.make_clients(dist, loc=locations)
        base = Q.quantile_params(s.taus[0], s.rates[0], clients, lr_scale=cfg["lr_scale"])
        dist_rows, dist_curves = _budget_cells(ctx, s, dist, clients, base, recorders)
        rows += dist_rows
        curves += dist_curves
        sweep_rows += _rate_sweep(ctx, s, dist, clients, base, recorders)
    dists = tuple(str(d) for d in cfg["distributions"])
    source = str(cfg["locations"])
    data_text = (f"synthetic: K={s.clients} clients, locations {source} "
                 f"({', '.join(f'{x:.3f}' for x in locations)}), unit scale, "
                 f"distributions {list(dists)}")
    data_caption = (f"SYNTHETIC {', '.join(dists)} data, K = {s.clients} clients, "
                    f"locations: {source}")
    return CoverageStudy(
        s, rows, curves, sweep_rows, locations, z, distributions=dists, locations_source=source,
        fixed_data=bool(cfg["fixed_data"]), dc_lr_scale=float(cfg["dc_lr_scale"]),
        seeds=int(ctx.num_seeds), data_label="synthetic", data_text=data_text,
        data_caption=data_caption)


def _summary(res: CoverageStudy, verdicts) -> str:
    s, n = res.setting, res.seeds
    fixed = ("Fixed data: one dataset per (distribution, t_T) shared by every replication "
             "(results condition on it; only the privatisation noise and the record order "
             "vary). " if res.fixed_data else "Fresh data in every replication. ")
    return (f"Hete-L table with {n} replications per cell, t_T in {s.budgets}, nominal "
            f"{s.level:.0%}, methods {s.methods}. " + fixed
            + f"DC's step constant c0 = {res.dc_lr_scale:g}. Not run here: the paper's "
            "fixed-number-of-rounds comparison of schedules (where Log is best).\n"
            + summary_lines(verdicts))


def report(res: CoverageStudy) -> ExperimentResult:
    """Tables, figures, verdicts and summary of one study (pure: no keys, no simulation)."""
    s, n = res.setting, res.seeds
    figures = {
        "coverage_mae_vs_budget": _budget_figure(res.curves, s.taus, s.rate_names, s.methods,
                                                 s.level, n, res.data_caption),
        "coverage_mae_vs_r": _rate_figure(res.sweep_rows, s.methods, s.level, n,
                                          res.data_caption),
    }
    verdicts = with_data(_verdicts(res.rows, res.sweep_rows, s.budgets, s.level, n),
                         res.data_label)
    return ExperimentResult(
        tables={"hete_l": res.rows, "by_budget": res.curves, "by_rate": res.sweep_rows},
        figures=figures,
        summary=_summary(res, verdicts),
        data=res.data_text,
        extra={"critical_value": res.critical_value, "locations": res.locations.tolist()},
        verdicts=verdicts,
    )


def run(ctx: RunContext) -> ExperimentResult:
    return report(study(ctx))


PAPER_REPLICATIONS = 1000
REASONS = {
    "DP-SGD": "DP-SGD adds pure eps_k-LDP Laplace noise (sd sqrt(2)/eps_k), the noise the paper's "
              "MAEs fit; the paper does not publish its DP-SGD and the authors' code has none, so "
              "the remaining gap is unexplained sampling or tuning.",
    "DC": "Not reproducible from public code: the authors' DC (step 2/(t^0.51 + 100), mean of the "
          "V_k, CI +-6.747 sqrt(V)) gives ECP 0.600 / 0.427 / 0.020 in the three t_T = 1e4 cells "
          "against the paper's 0.898 / 0.709 / 0.049, and no published variant gives the paper's "
          "DC coverage; ours starts at q0 = 0 without their N(0, 1) start and 5% constant-step "
          "warm-up, so at c0 = 2 its Polyak average keeps more of the start's bias.",
    "Single": "Single's step size and pooling are not published; ours pools the K t_T reports in "
              "one stream with Local SGD's learning rate, which at tau = 0.8 ",
}


MAE_REASONS = {
    "DP-SGD": REASONS["DP-SGD"],
    "DC": "DC estimates a combination of the local quantiles, not Q*; with the authors' step "
          "constant c0 = 2 its MAE is near the paper's in two of the three t_T = 1e4 cells.",
    "Single": REASONS["Single"],
}


def _reason(table: dict, r: dict, ours: float, paper: float) -> str:
    """The stated reason for a method, completed with the measured gap where it needs one."""
    text = table.get(r["method"], "")
    if r["method"] == "Single":
        side = "over" if ours > paper else "under"
        text += f"comes out {abs(ours - paper):.3g} {side} the paper ({ours:.3g} vs {paper:.3g})."
    return text


def _verdicts(rows, sweep_rows, budgets, level, n):
    """The paper's Hete-L table (per reported cell: ECP and MAE) and its findings."""
    name = "quantile-coverage"
    out = []
    normal = [r for r in rows if r["distribution"] == "normal"]
    for r in normal:
        if r["paper_ecp"] is None:
            continue
        cell = f"{r['method']}, t_T={r['t_T']}, tau={r['tau']}, r={r['r']}"
        pe, pm = r["paper_ecp"], r["paper_mae"]
        # ECP: binomial SE of both estimates under the paper's value, + rounding to 3 decimals.
        tol_e = 2 * math.sqrt(pe * (1 - pe) * (1 / n + 1 / PAPER_REPLICATIONS)) + 0.0005
        out.append(judge(
            name, f"ECP of {cell}", r["ecp"], pe, tol_e,
            measure=f"empirical coverage of the {level:.0%} CI (share of {n} replications)",
            tolerance_note=f"2 binomial SE ({n} vs {PAPER_REPLICATIONS} replications) + rounding",
            reason=_reason(REASONS, r, r["ecp"], pe)))
        # MAE: SE of our mean |error| and of the paper's (same spread, 1000 replications).
        tol_m = 2 * r["mae_se"] * math.sqrt(1 + n / PAPER_REPLICATIONS) + 0.00005
        out.append(judge(
            name, f"MAE of {cell}", r["mae"], pm, tol_m,
            measure=f"mean absolute error of the quantile estimate over {n} replications "
            "(units of the data)",
            tolerance_note=f"2 SE of the MAE ({n} vs {PAPER_REPLICATIONS} replications) + rounding",
            reason=_reason(MAE_REASONS, r, r["mae"], pm)))
    # C1 has the smallest MAE among the federated methods (up to 2 SE of the difference).
    federated = {"C1", "C5", "Log", "DP-SGD"}
    cells = {}
    for r in normal:
        if r["method"] in federated:
            cells.setdefault((r["t_T"], r["tau"], r["r"]), {})[r["method"]] = r
    cells = {key: c for key, c in cells.items() if "C1" in c and len(c) > 1}
    if cells:
        wins = sum(
            all(c["C1"]["mae"] <= o["mae"] + 2 * math.hypot(c["C1"]["mae_se"], o["mae_se"])
                for m, o in c.items() if m != "C1")
            for c in cells.values())
        out.append(judge_condition(
            name, "C1 has the smallest MAE among the federated methods", wins == len(cells),
            partly=wins > len(cells) / 2, ours=wins / len(cells), paper=1.0,
            tolerance_note="fraction of (t_T, tau, r) cells where C1's MAE <= every other "
            "federated method's + 2 SE; 1: every cell"))
    # MAE falls as t_T grows (C1, every (tau, r)).
    if len(budgets) > 1:
        c1 = [r for r in normal if r["method"] == "C1"]
        pairs = {(r["tau"], r["r"]) for r in c1}
        falls = sum(
            next(r["mae"] for r in c1 if (r["tau"], r["r"]) == p and r["t_T"] == budgets[-1])
            < next(r["mae"] for r in c1 if (r["tau"], r["r"]) == p and r["t_T"] == budgets[0])
            for p in pairs)
        if pairs:
            out.append(judge_condition(
                name, "C1's MAE falls as t_T grows", falls == len(pairs), partly=falls > 0,
                ours=falls / len(pairs), paper=1.0,
                tolerance_note=f"fraction of (tau, r) cells with MAE(t_T={budgets[-1]}) < "
                f"MAE(t_T={budgets[0]}); 1: every cell"))
    # MAE falls as r grows (C1, common r sweep) -- each step within 2 SE.
    sweep = sorted((r for r in sweep_rows if r["method"] == "C1" and r["distribution"] == "normal"),
                   key=lambda r: r["r"])
    if len(sweep) > 1:
        ok = all(b["mae"] <= a["mae"] + 2 * math.hypot(a["mae_se"], b["mae_se"])
                 for a, b in zip(sweep[:-1], sweep[1:], strict=True))
        out.append(judge_condition(
            name, "C1's MAE falls as r grows", ok and sweep[-1]["mae"] < sweep[0]["mae"],
            partly=sweep[-1]["mae"] < sweep[0]["mae"], ours=sweep[-1]["mae"] / sweep[0]["mae"],
            paper=None, tolerance_note=f"C1's MAE(r={sweep[-1]['r']:g}) / "
            f"MAE(r={sweep[0]['r']:g}), unitless (< 1: falls); no step up by more than 2 SE"))
    # Theorem 3.1: C1's MAE = sqrt(2/pi) * sd at the largest budget.
    for r in normal:
        if r["method"] == "C1" and r["t_T"] == budgets[-1]:
            theory = math.sqrt(2 / math.pi) * r["theory_sd"]
            out.append(judge(
                name, f"Theorem 3.1: C1 MAE = sqrt(2/pi) sigma/sqrt(t_T) at t_T={r['t_T']}, "
                f"tau={r['tau']}, r={r['r']}", r["mae"], theory, 2 * r["mae_se"],
                reference="Theorem 3.1",
                measure=f"C1's mean absolute error over {n} replications (units of the data)",
                tolerance_note="2 SE of our MAE (asymptotic law, finite t_T)"))
    # DC under-covers under heterogeneity (the paper's DC breakdown).
    dc = [r for r in normal if r["method"] == "DC"]
    if dc:
        broken = sum(r["ecp"] < level - 3 * math.sqrt(level * (1 - level) / n) for r in dc)
        out.append(judge_condition(
            name, "DC's coverage breaks down under heterogeneity", broken == len(dc),
            partly=broken > 0, ours=broken / len(dc), paper=1.0,
            tolerance_note="fraction of cells where DC's empirical coverage is below the "
            "nominal level by > 3 binomial SE; 1: every cell",
            reason=REASONS["DC"]))
    return out


def _paper_points(method, tau, rname, x_range=(0.0, math.inf)):
    """The paper's (t_T, ECP, MAE) for one method and panel, at t_T inside ``x_range`` (the
    budgets this run simulated)."""
    pts = []
    for (t, ptau, pr), by in PAPER_TABLE.items():
        if ptau == tau and pr == rname and method in by and x_range[0] <= t <= x_range[1]:
            pts.append((t, *by[method]))
    return sorted(pts)


def _budget_panel(top, bottom, curves, dist, tau, rname, methods, level, n):
    """One (tau, r) column: coverage (top) and MAE (bottom) against t_T, with the paper's values
    at the budgets simulated here. Returns the number of paper stars drawn."""
    mae_values, stars = [], 0
    samples = [p["samples"] for p in curves]
    x_range = (min(samples), max(samples)) if samples else (0.0, -1.0)
    for m_i, method in enumerate(methods):
        pts = [p for p in curves if p["distribution"] == dist and p["tau"] == tau
               and p["r"] == rname and p["method"] == method]
        style = series_style(m_i)
        offset = 1 + METHOD_OFFSET * (m_i - len(methods) / 2)
        xs = np.array([p["samples"] for p in pts], float) * offset
        mean_bars(top, xs, [p["ecp"] for p in pts], [p["ecp_se"] for p in pts],
                  label=method, clip=(0.0, 1.0), **style)
        _, lo, hi = mean_bars(bottom, xs, [p["mae"] for p in pts],
                              [p["mae_se"] for p in pts], label=method, log=True, **style)
        mae_values += [lo, hi]
        paper = _paper_points(method, tau, rname, x_range) if dist == "normal" else []
        if paper:
            label = "paper (stars, method colour)"
            px = [p[0] * offset for p in paper]
            paper_markers(top, px, [p[1] for p in paper], color=style["color"], label=label)
            paper_markers(bottom, px, [p[2] for p in paper], color=style["color"], label=label)
            mae_values.append([p[2] for p in paper])
            stars += len(paper)
    coverage_axis(top, level, replications=n)
    top.set_title(f"{dist}, tau = {tau}, r = {rname}")
    for ax in (top, bottom):
        ax.set_xscale("log")
        ax.set_xlabel("t_T (samples per client)")
    bottom.set_yscale("log")
    fit_ylim(bottom, mae_values, log=True)
    bottom.set_ylabel("MAE")
    return stars


def _stars_note(curves, panels, drawn) -> str:
    """Which of the paper's Hete-L cells the figure shows, and why the others are absent."""
    samples = [p["samples"] for p in curves]
    top = max(samples) if samples else 0
    shown = sorted({t for (t, _, _) in PAPER_TABLE if t <= top})
    beyond = sorted({t for (t, _, _) in PAPER_TABLE if t > top})
    text = ("Stars: the paper's Hete-L values (1000 replications), offset with their method"
            + (f", at t_T = {', '.join(map(str, shown))}" if shown else "") + ".")
    if beyond:
        text += (f" Its t_T = {', '.join(map(str, beyond))} row lies beyond this run's largest "
                 f"t_T ({top}) and is not drawn (--size paper runs it).")
    empty = [f"tau = {tau}, r = {rname}" for (tau, rname), k in zip(panels, drawn, strict=True)
             if k == 0 and not any(pt == tau and pr == rname for (_, pt, pr) in PAPER_TABLE)]
    if empty:
        text += f" The paper reports no cell for {'; '.join(empty)}."
    return text


def _budget_figure(curves, taus, rate_names, methods, level, n, data_caption):
    panels = [(t, r) for t in taus for r in rate_names]
    fig, axes = figure(len(panels), 2, width=3.6, height=3.0)
    dist = curves[0]["distribution"] if curves else "normal"
    drawn = [_budget_panel(axes[0, c], axes[1, c], curves, dist, tau, rname, methods, level, n)
             for c, (tau, rname) in enumerate(panels)]
    figure_legend(fig, axes)
    caption(fig, data=data_caption, unit="one sample of one client (one randomized-response bit, "
            "eps_k-LDP with eps_k = log((1 + r_k)/(1 - r_k)))",
            note=f"{n} replications; {se_note('error bars')[:-1]} (binomial for the coverage). "
            + _stars_note(curves, panels, drawn) + " " + coverage_axis_note()
            + " Methods are offset slightly in t_T so that coinciding points stay visible.",
            title=f"Coverage and MAE vs budget ({PAPER_TITLE}, Hete-L table)")
    return fig


def _rate_figure(sweep_rows, methods, level, n, data_caption):
    fig, axes = figure(2, 1, width=4.2)
    top, bottom = axes[0, 0], axes[0, 1]
    mae_values = []
    if sweep_rows:
        dist = sweep_rows[0]["distribution"]
        for m_i, method in enumerate(methods):
            pts = [p for p in sweep_rows if p["method"] == method and p["distribution"] == dist]
            style = series_style(m_i)
            xs = np.array([p["r"] for p in pts]) + 0.006 * (m_i - len(methods) / 2)
            mean_bars(top, xs, [p["ecp"] for p in pts], [p["ecp_se"] for p in pts],
                      label=method, clip=(0.0, 1.0), **style)
            _, lo, hi = mean_bars(bottom, xs, [p["mae"] for p in pts], [p["mae_se"] for p in pts],
                                  label=method, log=True, **style)
            mae_values += [lo, hi]
        pts = [p for p in sweep_rows if p["method"] == methods[0] and p["distribution"] == dist]
        theory = [p["theory_sd"] * math.sqrt(2 / math.pi) for p in pts]
        # dotted with crosses: the nominal line of the coverage panel is the dashed black one
        bottom.plot([p["r"] for p in pts], theory, ":", color="black", marker="x", markersize=5,
                    label="Thm 3.1 (C1 MAE)")
        mae_values.append(theory)
        for ax in (top, bottom):
            ax.set_title(f"{dist}, tau = {pts[0]['tau'] if pts else ''}, "
                         f"t_T = {pts[0]['t_T'] if pts else ''}")
        bottom.set_yscale("log")
        fit_ylim(bottom, mae_values, log=True)
    coverage_axis(top, level, replications=n)
    for ax in (top, bottom):
        ax.set_xlabel("common r (truthful-response rate)")
    bottom.set_ylabel("MAE")
    figure_legend(fig, axes)
    caption(fig, data=data_caption, unit="one sample of one client (one randomized-response bit, "
            "eps-LDP with eps = log((1 + r)/(1 - r)))",
            note=f"{n} replications; {se_note('error bars')[:-1]} (binomial for the coverage). "
            + coverage_axis_note() + " The paper reports no values on this sweep.",
            title=f"Coverage and MAE vs a common truthful-response rate r ({PAPER_TITLE})")
    return fig


EXPERIMENT = Experiment(
    name="quantile-coverage",
    description=f"Hete-L coverage/MAE table: Local SGD vs DP-SGD, DC and Single ({PAPER_TITLE})",
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
        Option("dc_lr_scale", float, DC_LR_SCALE,
               "DC's per-sample step constant c0 (the authors' public code uses 2)"),
        Option("fixed_data", bool, False,
               "draw one dataset per (distribution, t_T) for all replications, as the authors do"),
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
    cost=53,
)

__all__ = [
    "AUTHORS_LOCATIONS",
    "EXPERIMENT",
    "METHODS",
    "PAPER_TABLE",
    "CoverageStudy",
    "Setting",
    "client_locations",
    "method_setup",
    "parse_setting",
    "rate_vector",
    "report",
    "run",
    "study",
    "summarise",
]
