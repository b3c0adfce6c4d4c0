"""``experts-covid``: paper 000's COVID hospital task (RW-Meta vs baselines).

Each week, pick the hospital of a state that will report the highest COVID inpatient density;
the gain is the chosen hospital's true density. Algorithms (all vmapped over seeds x mu
through the engine, per state):

* **RW-Meta** (mu-GLDP; :mod:`ldpjax.experts.rw_meta`) over the paper's 13 learners
  (rolling ridge w in {8,16,32,64} x {weak, medium, strong} + RW-FTPL as a learner);
* **RW-FTPL** over the n hospitals ("data-independent experts"; part A's
  :mod:`ldpjax.experts.rw_ftpl`, mu-GLDP);
* **A&S Min Noise / Min Regret** (central mu-GDP; :mod:`ldpjax.experts.agarwal_singh`);
* reference points: the best learner in hindsight inside each private run (Theorem 3's
  comparator), the best learner run on the clean gains (no privacy noise: "best linear
  model"), the best fixed hospital, uniform play.

Data: ``--data PATH`` loads a real HHS facility file (:func:`ldpjax.experts.covid.load_hhs_facility`);
without it the documented synthetic stand-in is used
(:func:`ldpjax.experts.covid.synthetic_covid`). Every table row, figure and the summary say
which. ``--ldp-sensitivity`` / ``--central-sensitivity`` choose the neighbouring relation:
``sqrt-n`` (default: one week's whole gain vector, l2 sensitivity sqrt(n), the spec) or a number
(e.g. 1: one hospital's density in one week).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import product_grid, record
from ldpjax.experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, strs
from ldpjax.experts import agarwal_singh as AS
from ldpjax.experts import covid
from ldpjax.experts.gains import validate_gains
from ldpjax.experts.learners import evaluate_learners, paper_learners
from ldpjax.experts.meta_bounds import regret_bound_meta
from ldpjax.experts.privacy import noise_scale
from ldpjax.experts.rw_meta import lambda_max_ratio, meta_params, rw_meta_algorithm
from ldpjax.plotting import PALETTE, figure

#: The paper's Table (mean total gain, spec ``experts.md``): (meta, min noise, min regret, best).
PAPER = {
    ("NM", 1.0): (36.87, 22.83, 13.41, 40.69),
    ("NM", 0.25): (22.46, 15.58, 13.38, 25.85),
    ("PA", 1.0): (40.32, 23.55, 15.38, 44.30),
    ("CA", 1.0): (55.62, 25.09, 16.91, 61.16),
    ("CA", 0.25): (33.34, 17.93, 16.84, 38.43),
}
ALGORITHMS = ("RW-Meta", "RW-FTPL", "A&S Min Noise", "A&S Min Regret")


def _sensitivity(text: str, n: int) -> tuple[float | None, str]:
    text = str(text).strip().lower()
    if text in ("sqrt-n", "sqrtn", "sqrt(n)"):
        return None, f"sqrt(n) = {math.sqrt(n):.3g}"
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"sensitivity must be 'sqrt-n' or a positive number; got {text!r}"
        ) from None
    if not value > 0 or math.isinf(value):
        raise ValueError(f"sensitivity must be 'sqrt-n' or a positive number; got {text!r}")
    return value, f"{value:g}"


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, np.float64)
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")
    return float(x.mean()), se


def _load(ctx: RunContext, state: str):
    path = str(ctx.config["data"] or "").strip()
    if path:
        start = ctx.config["start"] or None
        end = ctx.config["end"] or None
        data = covid.load_hhs_facility(path, state, start=start, end=end)
        ctx.log(covid.format_report(data))
        return data, "real HHS data"
    weeks = int(ctx.config["weeks"])
    key = jax.random.fold_in(jax.random.key(int(ctx.config["data_seed"])), sum(map(ord, state)))
    data = covid.synthetic_covid_data(
        key,
        state,
        weeks,
        seed_label=f"data_seed={ctx.config['data_seed']}",
        wave_heterogeneity=float(ctx.config["wave_heterogeneity"]),
    )
    return data, "synthetic stand-in"


def _run_state(ctx: RunContext, state: str, mus: tuple[float, ...]) -> dict[str, Any]:
    from ldpjax.experts.rw_ftpl import FTPLConfig, ftpl_params, rw_ftpl

    data, kind = _load(ctx, state)
    gains_np = data.density
    gains = validate_gains(jnp.asarray(gains_np, jnp.float32))
    T, n = gains.shape
    ldp_sens, ldp_text = _sensitivity(ctx.config["ldp_sensitivity"], n)
    cdp_sens, cdp_text = _sensitivity(ctx.config["central_sensitivity"], n)
    learners = paper_learners()
    m = learners.size
    mu_arr = np.asarray(mus, np.float64)

    # --- RW-Meta over the 13 learners
    meta_record = record.combine(
        gain=record.total(lambda o: o.gain),
        learners=record.total(lambda o: o.learner_gains),
        curve=record.every_step(lambda o: o.gain),
        covariance=record.last(lambda o: o.covariance),
    )
    meta = ctx.simulate(
        rw_meta_algorithm(learners, n, ldp_sens),
        product_grid(meta_params(1.0, learners), mu=list(mus)),
        inputs=gains,
        grid_ndim=1,
        record=meta_record,
        keep_state=False,
        label=f"{state}-rw-meta",
    ).record

    # --- RW-FTPL over the n hospitals (part A)
    ftpl = ctx.simulate(
        rw_ftpl(FTPLConfig(n, ldp_sens)),
        product_grid(ftpl_params(1.0), mu=list(mus)),
        inputs=gains,
        grid_ndim=1,
        record=record.combine(
            gain=record.total(lambda o: o.gain), curve=record.every_step(lambda o: o.gain)
        ),
        keep_state=False,
        label=f"{state}-rw-ftpl",
    ).record

    # --- Agarwal & Singh, both settings (one compiled algorithm, grid setting x mu)
    tree_sens = math.sqrt(n) if cdp_sens is None else cdp_sens
    levels = AS.tree_levels(T)
    scale = tree_sens / math.sqrt(n)  # node noise scales with the per-node sensitivity
    min_noise = AS.min_noise_setting(mu_arr, n, T)
    min_regret = AS.min_regret_setting(mu_arr, n, T)
    node_sd = jnp.stack([min_noise.node_sd, min_regret.node_sd]) * scale
    rate = jnp.stack([min_noise.learning_rate, min_regret.learning_rate])
    if cdp_sens is not None:  # the learning rate of Min Regret depends on the noise: re-solve
        slope = T / 8 + 0.5 * node_sd[1] * math.sqrt(2 * math.log(2 * n)) * AS._noise_sum(T)
        rate = rate.at[1].set(jnp.sqrt(math.log(n) / slope))
    tree = ctx.simulate(
        AS.tree_hedge(AS.TreeHedgeConfig(n, T)),
        AS.TreeHedgeParams(node_sd, rate),
        inputs=gains,
        grid_ndim=2,
        record=record.combine(
            gain=record.total(lambda o: o.gain), curve=record.every_step(lambda o: o.gain)
        ),
        keep_state=False,
        label=f"{state}-agarwal-singh",
    ).record

    # --- reference points
    clean = np.asarray(evaluate_learners(learners, gains), np.float64)  # (T, m), no noise
    clean_totals = clean.sum(0)
    best_clean = int(np.argmax(clean_totals))
    g64 = np.asarray(gains_np, np.float64)
    best_fixed = float(g64.sum(0).max())
    uniform = float(g64.mean(1).sum())
    oracle = float(g64.max(1).sum())
    return {
        "data": data,
        "kind": kind,
        "T": T,
        "n": n,
        "m": m,
        "labels": learners.labels,
        "ldp_sensitivity": ldp_text,
        "central_sensitivity": cdp_text,
        "ldp_sens_value": ldp_sens,
        "levels": levels,
        "meta": meta,
        "ftpl": ftpl,
        "tree": tree,
        "min_regret": min_regret,
        "node_sd": np.asarray(node_sd),
        "rate": np.asarray(rate),
        "clean_totals": clean_totals,
        "clean_curve": np.cumsum(clean[:, best_clean]),
        "best_clean": best_clean,
        "best_fixed": best_fixed,
        "best_fixed_curve": np.cumsum(g64[:, int(np.argmax(g64.sum(0)))]),
        "uniform": uniform,
        "uniform_curve": np.cumsum(g64.mean(1)),
        "oracle": oracle,
    }


def _rows(state: str, r: dict[str, Any], mus) -> tuple[list, list, list]:
    summary, long_rows, learner_rows = [], [], []
    label = r["data"].source
    T, n, m = r["T"], r["n"], r["m"]
    for i, mu in enumerate(mus):
        meta_tot = r["meta"]["gain"][i]
        learner_tot = r["meta"]["learners"][i]  # (seeds, m)
        best_in_run = learner_tot.max(-1)
        values = {
            "RW-Meta": meta_tot,
            "RW-FTPL": r["ftpl"]["gain"][i],
            "A&S Min Noise": r["tree"]["gain"][0, i],
            "A&S Min Regret": r["tree"]["gain"][1, i],
            "best learner in run": best_in_run,
        }
        stats = {k: _mean_se(v) for k, v in values.items()}
        eta = float(noise_scale(mu, n, r["ldp_sens_value"]))
        ratio = np.maximum(np.asarray(lambda_max_ratio(r["meta"]["covariance"][i], eta, T)), 0.0)
        bound = np.asarray(regret_bound_meta(mu, T, m, n, ratio, sensitivity=r["ldp_sens_value"]))
        regret_learner = _mean_se(best_in_run - meta_tot)
        static_regret = _mean_se(r["best_fixed"] - meta_tot)
        counts = np.bincount(np.argmax(learner_tot, -1), minlength=m)
        mean_learner = learner_tot.mean(0)
        paper = PAPER.get((state, float(mu)))
        private_others = [stats[k][0] for k in ALGORITHMS[1:]]
        row = {
            "state": state,
            "mu": mu,
            "n": n,
            "T": T,
            "rw_meta": stats["RW-Meta"][0],
            "rw_meta_se": stats["RW-Meta"][1],
            "rw_ftpl": stats["RW-FTPL"][0],
            "rw_ftpl_se": stats["RW-FTPL"][1],
            "as_min_noise": stats["A&S Min Noise"][0],
            "as_min_noise_se": stats["A&S Min Noise"][1],
            "as_min_regret": stats["A&S Min Regret"][0],
            "as_min_regret_se": stats["A&S Min Regret"][1],
            "best_learner_in_run": stats["best learner in run"][0],
            "best_learner_in_run_se": stats["best learner in run"][1],
            "best_learner_clean": float(r["clean_totals"][r["best_clean"]]),
            "best_fixed_hospital": r["best_fixed"],
            "uniform": r["uniform"],
            "meta_fraction_of_best_learner_in_run": stats["RW-Meta"][0]
            / stats["best learner in run"][0],
            "meta_fraction_of_best_learner_clean": stats["RW-Meta"][0]
            / float(r["clean_totals"][r["best_clean"]]),
            "meta_beats_other_private": bool(stats["RW-Meta"][0] > max(private_others)),
            "meta_static_regret": static_regret[0],
            "meta_static_regret_se": static_regret[1],
            "meta_regret_vs_best_learner": regret_learner[0],
            "meta_regret_vs_best_learner_se": regret_learner[1],
            "theorem3_bound": float(bound.mean()),
            "lambda_ratio": float(ratio.mean()),
            "best_learner_in_run_mode": r["labels"][int(np.argmax(counts))],
            "best_learner_in_run_share": float(counts.max() / counts.sum()),
            "best_learner_by_mean": r["labels"][int(np.argmax(mean_learner))],
            "best_learner_clean_label": r["labels"][r["best_clean"]],
            "paper_rw_meta": paper[0] if paper else None,
            "paper_as_min_noise": paper[1] if paper else None,
            "paper_as_min_regret": paper[2] if paper else None,
            "paper_best_linear_model": paper[3] if paper else None,
            "ldp_sensitivity": r["ldp_sensitivity"],
            "central_sensitivity": r["central_sensitivity"],
            "data": label,
        }
        summary.append(row)
        for name, (mean, se) in stats.items():
            long_rows.append(
                {
                    "state": state,
                    "mu": mu,
                    "algorithm": name,
                    "mean_total_gain": mean,
                    "se": se,
                    "data": label,
                }
            )
        for j, lab in enumerate(r["labels"]):
            learner_rows.append(
                {
                    "state": state,
                    "mu": mu,
                    "learner": lab,
                    "mean_gain_in_run": float(mean_learner[j]),
                    "share_best_in_run": float(counts[j] / counts.sum()),
                    "gain_clean": float(r["clean_totals"][j]),
                    "data": label,
                }
            )
    return summary, long_rows, learner_rows


def _figure(results: dict[str, dict], mus, data_kind: str):
    states = list(results)
    fig, axes = figure(len(mus), len(states), width=3.4, height=2.7, sharex=True)
    names = list(ALGORITHMS) + ["best learner (clean)", "best fixed hospital", "uniform"]
    for r_i, state in enumerate(states):
        r = results[state]
        weeks = np.arange(1, r["T"] + 1)
        for c_i, mu in enumerate(mus):
            ax = axes[r_i, c_i]
            curves = [
                r["meta"]["curve"][c_i].mean(0),
                r["ftpl"]["curve"][c_i].mean(0),
                r["tree"]["curve"][0, c_i].mean(0),
                r["tree"]["curve"][1, c_i].mean(0),
                r["clean_curve"],
                r["best_fixed_curve"],
                r["uniform_curve"],
            ]
            reference_styles = [("k", ":"), ("0.45", "--"), ("0.65", "-.")]
            for k, (name, curve) in enumerate(zip(names, curves, strict=True)):
                if k < 4:
                    color, style, values = PALETTE[k], "-", np.cumsum(curve)
                else:
                    (color, style), values = reference_styles[k - 4], curve
                ax.plot(
                    weeks, values, style, color=color, label=name, linewidth=1.6 if k == 0 else 1.0
                )
            ax.set_title(f"{state} (n={r['n']}), mu={mu:g}", fontsize=8)
            if r_i == len(states) - 1:
                ax.set_xlabel("week")
            if c_i == 0:
                ax.set_ylabel("cumulative gain")
    axes[0, 0].legend(fontsize=6)
    fig.suptitle(f"COVID hospital task: mean cumulative gain ({data_kind})", fontsize=9)
    return fig


def _data_figure(results: dict[str, dict], data_kind: str):
    fig, axes = figure(len(results), 1, width=3.6, height=2.7)
    for k, (state, r) in enumerate(results.items()):
        ax = axes[0, k]
        g = r["data"].density
        top = np.argsort(g.sum(0))[::-1][:3]
        ax.plot(g.mean(1), color="k", label="state mean")
        for j, h in enumerate(top):
            ax.plot(g[:, h], color=PALETTE[j + 1], linewidth=0.8, label=f"#{j + 1} hospital")
        ax.plot(g.max(1), ":", color="grey", linewidth=0.8, label="weekly max")
        ax.set_title(f"{state}: {g.shape[1]} hospitals", fontsize=8)
        ax.set_xlabel("week")
        ax.set_ylabel("COVID density")
    axes[0, 0].legend(fontsize=6)
    fig.suptitle(f"Gains: COVID inpatients / inpatient beds ({data_kind})", fontsize=9)
    return fig


def run(ctx: RunContext) -> ExperimentResult:
    mus = tuple(float(x) for x in ctx.config["mu"])
    states = tuple(s.strip().upper() for s in ctx.config["states"])
    for s in states:
        if not ctx.config["data"] and s not in covid.STATE_HOSPITALS:
            raise ValueError(
                f"states must be among {sorted(covid.STATE_HOSPITALS)} for the stand-in; got {s!r}"
            )
    meta_params(np.asarray(mus), ())  # validates mu
    for option in ("ldp_sensitivity", "central_sensitivity"):
        _sensitivity(ctx.config[option], 2)  # validates before any work
    results, summary, long_rows, learner_rows, info = {}, [], [], [], []
    for state in states:
        r = _run_state(ctx, state, mus)
        results[state] = r
        s, lr, lrn = _rows(state, r, mus)
        summary += s
        long_rows += lr
        learner_rows += lrn
        info.append(r["data"].source)
    kind = {r["kind"] for r in results.values()}
    data_kind = " + ".join(sorted(kind))
    mr_rows = []
    for state, r in results.items():
        for i, mu in enumerate(mus):
            mr = r["min_regret"]
            mr_rows.append(
                {
                    "state": state,
                    "mu": mu,
                    "min_noise_node_sd": float(r["node_sd"][0, i]),
                    "min_noise_learning_rate": float(r["rate"][0, i]),
                    "min_regret_epsilon": float(mr.epsilon[i]),
                    "min_regret_delta": float(mr.delta[i]),
                    "min_regret_node_sd": float(r["node_sd"][1, i]),
                    "min_regret_learning_rate": float(r["rate"][1, i]),
                    "tree_levels": r["levels"],
                    "central_sensitivity": r["central_sensitivity"],
                    "data": r["data"].source,
                }
            )
    wins = sum(row["meta_beats_other_private"] for row in summary)
    private = [row for row in summary if math.isfinite(row["mu"])]
    frac = np.mean([row["meta_fraction_of_best_learner_in_run"] for row in summary])
    neg = sum(row["meta_static_regret"] < 0 for row in summary)
    sizes = ", ".join(f"{st} n={r['n']}" for st, r in results.items())
    text = (
        f"COVID hospital task on the {data_kind} ({sizes}; T = "
        f"{next(iter(results.values()))['T']} weeks; {ctx.num_seeds} runs per (state, mu)); "
        f"LDP sensitivity {ctx.config['ldp_sensitivity']}, central sensitivity "
        f"{ctx.config['central_sensitivity']}. RW-Meta beats every other private algorithm "
        f"(RW-FTPL, A&S Min Noise, A&S Min Regret) in {wins} of {len(summary)} (state, mu) cells "
        f"({sum(r['meta_beats_other_private'] for r in private)} of {len(private)} with finite "
        f"mu); it reaches on average {100 * frac:.0f}% of the best learner in hindsight of its "
        f"own runs and has negative static regret in {neg} cells. (The paper reports RW-Meta "
        f"ahead everywhere at ~90% of the best linear model.)"
    )
    if ctx.config["ldp_sensitivity"] == "sqrt-n" and wins < len(private):
        text += (
            " Why the shape differs here: with l2 sensitivity sqrt(n) the local noise per "
            "hospital and week is sqrt(n)/mu (4.9 to 17 at mu = 1) against densities of 0.05-0.4, "
            "so every private learner reads mostly noise; protecting one hospital's report "
            "(--ldp-sensitivity 1) gives numbers in the paper's range (README, experts-covid)."
        )
    return ExperimentResult(
        tables={
            "covid_summary": summary,
            "covid_gains": long_rows,
            "covid_learners": learner_rows,
            "agarwal_singh_settings": mr_rows,
        },
        figures={
            "covid_cumulative_gain": _figure(results, mus, data_kind),
            "covid_data": _data_figure(results, data_kind),
        },
        summary=text,
        data="; ".join(info),
        extra={"states": list(states), "mu": list(mus), "data_kind": data_kind},
    )


EXPERIMENT = Experiment(
    name="experts-covid",
    description="Paper 000's COVID hospital task: RW-Meta vs RW-FTPL, Agarwal & Singh, best learner",
    run=run,
    options=(
        Option("data", str, "", "path to a real HHS facility CSV (empty: synthetic stand-in)"),
        Option("states", strs, ("NM", "PA", "CA"), "states (comma-separated)"),
        Option("mu", floats, (math.inf, 1.0, 0.5, 0.25), "privacy levels mu (inf = no privacy)"),
        Option("weeks", int, covid.SYNTHETIC_WEEKS, "weeks of the synthetic stand-in"),
        Option("data_seed", int, 0, "seed of the synthetic stand-in"),
        Option(
            "wave_heterogeneity",
            float,
            covid.WAVE_AMPLITUDE_LOG_SD,
            "stand-in only, for sensitivity analyses: sd of log per-hospital per-wave amplitudes",
        ),
        Option("start", str, "", "first collection week kept from a real file (ISO date)"),
        Option("end", str, "", "last collection week kept from a real file (ISO date)"),
        Option(
            "ldp_sensitivity",
            str,
            "sqrt-n",
            "l2 sensitivity of the LDP release: sqrt-n or a number",
        ),
        Option(
            "central_sensitivity",
            str,
            "sqrt-n",
            "per-node sensitivity of the A&S tree: sqrt-n or a number",
        ),
    ),
    sizes={"small": {"seeds": 20}, "paper": {"seeds": 100}},
    order=21,
)
