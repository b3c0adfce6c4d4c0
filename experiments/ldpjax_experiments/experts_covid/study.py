"""The study: every algorithm on every gain matrix, for every (privacy unit, mu) the readings
need, as labelled arrays.

:func:`study` returns a :class:`CovidStudy`: the parsed :class:`Config`, one
:class:`StateStudy` per table state, per sweep point and per real-data state. A
:class:`StateStudy` holds the per-run arrays of one gain matrix; each field's docstring names
its axes:

* ``point``: a local grid point (unit, mu) of RW-Meta / RW-FTPL (:attr:`StateStudy.local_points`);
* ``cpoint``: a central grid point (unit, mu) of A&S (:attr:`StateStudy.central_points`);
* ``setting``: A&S Min Noise (0) or Min Regret (1);
* ``seed``: the run; ``week``: the round; ``learner``: one of the paper's 13 learners.

mu = inf is one point ``("*", inf)`` shared by every unit. The report
(:mod:`~ldpjax_experiments.experts_covid.report`) is a pure function of this result.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.datasets import covid as covid_data
from ldpjax.engine import product_grid, record
from ldpjax.experts import agarwal_singh as AS
from ldpjax.experts import covid
from ldpjax.experts.evaluation import EXPERTS_HINTS
from ldpjax.experts.gains import validate_gains
from ldpjax.experts.learners import evaluate_learners, paper_learners
from ldpjax.experts.rw_ftpl import FTPLConfig, ftpl_params, rw_ftpl
from ldpjax.experts.rw_meta import MetaConfig, meta_params, release_scale, rw_meta_algorithm
from ldpjax_experiments.experts_covid.readings import Reading, readings_from, sensitivity
from ldpjax_experiments.kit import subkey

# Module-level recorders: the engine caches compiled kernels per (algorithm, recorder), so the
# sweep and repeated runs reuse the compilation.
META_RECORD = record.combine(
    gain=record.total(lambda o: o.gain),
    learners=record.total(lambda o: o.learner_gains),
    learner_curve=record.every_step(lambda o: o.learner_gains),
    curve=record.every_step(lambda o: o.gain),
    covariance=record.last(lambda o: o.covariance),
)
GAIN_RECORD = record.combine(
    gain=record.total(lambda o: o.gain), curve=record.every_step(lambda o: o.gain)
)
Point = tuple[str, float]  # (unit, mu); ("*", inf) is the shared non-private point


@dataclasses.dataclass(frozen=True)
class Config:
    """The experiment's options, parsed and checked once (see the registered options)."""

    mus: tuple[float, ...]
    readings: tuple[Reading, ...]
    states: tuple[str, ...]
    data_path: str
    start: str
    end: str
    with_ftpl: bool
    weeks: int
    data_seed: int
    table_heterogeneity: float
    sweep: tuple[float, ...]
    sweep_state: str  # a state, or "NONE"
    data_dir: str
    real_states: tuple[str, ...]
    seeds: int

    @property
    def data_kind(self) -> str:
        return "real HHS data" if self.data_path else "SYNTHETIC stand-in (not real data)"


def parse_config(options: Mapping[str, Any], seeds: int) -> Config:
    """Check the options of one run (``ValueError`` naming the option and its allowed values)."""
    mus = tuple(float(x) for x in options["mu"])
    meta_params(np.asarray(mus), ())  # validates mu
    readings = tuple(readings_from(options))
    states = tuple(s.strip().upper() for s in options["states"])
    data_path = str(options["data"] or "").strip()
    if not data_path:
        for s in states:
            if s not in covid.STATE_HOSPITALS:
                raise ValueError(
                    f"states must be among {sorted(covid.STATE_HOSPITALS)} for the stand-in; "
                    f"got {s!r}"
                )
    table_h = float(options["table_heterogeneity"])
    sweep = tuple(float(h) for h in options["wave_heterogeneity"])
    for h in (table_h, *sweep):
        if not 0.0 <= h <= 5.0:
            raise ValueError(f"wave heterogeneity must be in [0, 5]; got {h}")
    sweep_state = str(options["sweep_state"]).strip().upper()
    if sweep_state == "AUTO":  # the stand-in's headline state, unless the table is on real data
        sweep_state = "NONE" if data_path else "CA"
    if sweep and sweep_state != "NONE" and sweep_state not in covid.STATE_HOSPITALS:
        raise ValueError(
            f"sweep_state must be among {sorted(covid.STATE_HOSPITALS)} or 'none'; "
            f"got {sweep_state!r}"
        )
    ftpl_option = str(options["ftpl"]).strip().lower()
    if ftpl_option not in ("auto", "0", "1"):
        raise ValueError(f"ftpl must be 'auto', '0' or '1'; got {ftpl_option!r}")
    return Config(
        mus=mus,
        readings=readings,
        states=states,
        data_path=data_path,
        start=str(options["start"] or ""),
        end=str(options["end"] or ""),
        with_ftpl=ftpl_option == "1" or (ftpl_option == "auto" and bool(data_path)),
        weeks=int(options["weeks"]),
        data_seed=int(options["data_seed"]),
        table_heterogeneity=table_h,
        sweep=sweep if sweep_state != "NONE" else (),
        sweep_state=sweep_state,
        data_dir=str(options["data_dir"]).strip(),
        real_states=tuple(s.strip().upper() for s in options["real_states"]),
        seeds=int(seeds),
    )


@dataclasses.dataclass(frozen=True)
class StateStudy:
    """Every algorithm's runs on one gain matrix (axes in each field's comment)."""

    data: covid_data.CovidData  # density: (week, hospital)
    labels: tuple[str, ...]  # (learner,)
    local_points: tuple[Point, ...]  # (point,)
    central_points: tuple[Point, ...]  # (cpoint,)
    meta_gain: np.ndarray  # (point, seed): RW-Meta's total gain
    meta_learners: np.ndarray  # (point, seed, learner): each learner's total gain in the run
    meta_curve: np.ndarray  # (point, seed, week): RW-Meta's weekly gain
    meta_covariance: np.ndarray  # (point, seed, learner, learner): Sigma*_T of Theorem 3
    ftpl_gain: np.ndarray | None  # (point, seed): RW-FTPL over the hospitals (None: not run)
    tree_gain: np.ndarray  # (setting, cpoint, seed): A&S total gain
    tree_curve: np.ndarray  # (setting, cpoint, seed, week): A&S weekly gain
    node_sd: np.ndarray  # (setting, cpoint): A&S tree-node noise sd
    rate: np.ndarray  # (setting, cpoint): A&S Hedge learning rate
    min_regret_epsilon: np.ndarray  # (cpoint,): Min Regret's optimal epsilon
    min_regret_delta: np.ndarray  # (cpoint,): Min Regret's optimal delta
    levels: int  # A&S tree levels L
    clean_totals: np.ndarray  # (learner,): each learner's total gain on the clean gains
    clean_curve: np.ndarray  # (week,): the best clean learner's cumulative gain
    best_static: float  # the best static hospital's total gain
    best_static_curve: np.ndarray  # (week,): its cumulative gain
    uniform: float  # uniform play's total gain
    uniform_curve: np.ndarray  # (week,): its cumulative gain
    advantage: float  # clean tracking advantage: best clean learner / best static hospital

    @property
    def T(self) -> int:
        return int(self.data.density.shape[0])

    @property
    def n(self) -> int:
        return int(self.data.density.shape[1])

    @property
    def m(self) -> int:
        return len(self.labels)

    @property
    def best_clean(self) -> int:
        return int(np.argmax(self.clean_totals))

    def local(self, reading: Reading, mu: float) -> int:
        """The ``point`` index of ``reading``'s local unit at ``mu``."""
        key = ("*", mu) if not math.isfinite(mu) else (reading.ldp, mu)
        return self.local_points.index(key)

    def central(self, reading: Reading, mu: float) -> int:
        """The ``cpoint`` index of ``reading``'s central unit at ``mu``."""
        key = ("*", mu) if not math.isfinite(mu) else (reading.central, mu)
        return self.central_points.index(key)


@dataclasses.dataclass(frozen=True)
class RealPanel:
    """The labelled real-data panel on the shared HHS extract (only a few weeks)."""

    path: Path
    states: Mapping[str, StateStudy]

    @property
    def weeks(self) -> int:
        return next(iter(self.states.values())).T


@dataclasses.dataclass(frozen=True)
class CovidStudy:
    """The whole run: the table (``state`` axis), the dynamics sweep (``heterogeneity`` axis:
    pairs (wave heterogeneity, study) on ``config.sweep_state``) and the real-data panel."""

    config: Config
    eta_inf: float  # RW-Meta's release noise sd at mu = inf (0: clean gains)
    table: Mapping[str, StateStudy]
    sweep: tuple[tuple[float, StateStudy], ...]
    real: RealPanel | None


def meta_eta_at_inf(learners) -> float:
    """RW-Meta's release noise sd at mu = inf (0: the learners and scores see clean gains)."""
    return float(release_scale(MetaConfig(2, learners.learners), jnp.inf))


@functools.lru_cache(maxsize=32)
def _min_regret(mus: tuple[float, ...], n: int, T: int):
    """A&S Min Regret at the default sensitivity sqrt(n), as NumPy arrays (one solve per
    (mu grid, n, T): the dynamics sweep reuses it)."""
    setting = AS.min_regret_setting(np.asarray(mus, np.float64), n, T)
    return setting._replace(**{k: np.asarray(v) for k, v in setting._asdict().items()})


def _grid(points, n):
    """mu and l2 sensitivity per grid point; mu = inf is one point shared by every unit."""
    mu = np.asarray([m for _, m in points], np.float64)
    sens = np.asarray([sensitivity(u, n) if u != "*" else 1.0 for u, _ in points], np.float64)
    return mu, sens


def _points(mus, readings) -> tuple[tuple[Point, ...], tuple[Point, ...]]:
    finite = [m for m in mus if math.isfinite(m)]
    inf = [("*", math.inf)] if len(finite) < len(mus) else []
    local = inf + [(u, m) for u in dict.fromkeys(r.ldp for r in readings) for m in finite]
    central = inf + [(u, m) for u in dict.fromkeys(r.central for r in readings) for m in finite]
    return tuple(local), tuple(central)


def _as_settings(cpoints, n: int, T: int):
    """A&S per (setting, cpoint): node sd, learning rate; Min Regret's (epsilon, delta).

    Min Noise: sigma = Delta sqrt(L) / mu with Hedge's standard rate. Min Regret: the optimal
    (eps, delta) does not depend on Delta (A&S module docstring), so sigma scales by
    Delta / sqrt(n) and the rate is re-optimised for that sigma."""
    cmu, csens = _grid(cpoints, n)
    sd = np.zeros((2, len(cpoints)))
    rate = np.zeros((2, len(cpoints)))
    mr = _min_regret(tuple(float(m) for m in cmu), n, T)
    for i, (m, s) in enumerate(zip(cmu, csens, strict=True)):
        sd[0, i] = float(AS.min_noise_node_sd(m, n, T, float(s)))
        rate[0, i] = AS.standard_learning_rate(n, T)
        sd[1, i] = float(mr.node_sd[i]) * s / math.sqrt(n)
        rate[1, i] = float(AS.optimal_learning_rate(sd[1, i], n, T))
    eps = np.asarray([float(mr.epsilon[i]) for i in range(len(cpoints))])
    delta = np.asarray([float(mr.delta[i]) for i in range(len(cpoints))])
    return sd, rate, eps, delta, csens


def study_gains(simulate, key, data, label: str, mus, readings, *, ftpl: bool = True):
    """Run every algorithm on one gain matrix for every (unit, mu) the readings need.

    One compiled algorithm per state: mu and the l2 sensitivity are params leaves, so the
    (unit, mu) points are one grid axis. ``simulate(algorithm, params, *, key, label, **kw)``
    is the engine's ``simulate`` (or the run context's)."""
    gains = validate_gains(jnp.asarray(data.density, jnp.float32))
    T, n = gains.shape
    learners = paper_learners()
    points, cpoints = _points(tuple(float(m) for m in mus), readings)
    mu, sens = _grid(points, n)

    def run(algorithm, params, grid_ndim, rec, name):
        out = simulate(algorithm, params, inputs=gains, grid_ndim=grid_ndim, record=rec,
                       keep_state=False, key=subkey(key, f"{label}-{name}"),
                       label=f"{label}-{name}", hints=EXPERTS_HINTS)
        return {k: np.asarray(v) for k, v in out.record.items()}

    grid = product_grid(meta_params(1.0, learners, 1.0), mu=list(mu))
    grid = grid._replace(sensitivity=jnp.asarray(sens, grid.mu.dtype))
    meta = run(rw_meta_algorithm(learners, n), grid, 1, META_RECORD, "rw-meta")
    ftpl_gain = None
    if ftpl:
        grid = product_grid(ftpl_params(1.0, 1.0), mu=list(mu))
        grid = grid._replace(sensitivity=jnp.asarray(sens, grid.mu.dtype))
        ftpl_gain = run(rw_ftpl(FTPLConfig(n)), grid, 1, GAIN_RECORD, "rw-ftpl")["gain"]
    # A&S: grid (setting: Min Noise, Min Regret) x (central unit, mu).
    sd, rate, eps, delta, csens = _as_settings(cpoints, n, T)
    params = AS.tree_hedge_params(sd, rate, np.broadcast_to(csens, sd.shape))
    tree = run(AS.tree_hedge(AS.TreeHedgeConfig(n, T)), params, 2, GAIN_RECORD, "agarwal-singh")
    return StateStudy(
        data=data, labels=tuple(learners.labels), local_points=points, central_points=cpoints,
        meta_gain=meta["gain"], meta_learners=meta["learners"], meta_curve=meta["curve"],
        meta_covariance=meta["covariance"], ftpl_gain=ftpl_gain, tree_gain=tree["gain"],
        tree_curve=tree["curve"], node_sd=sd, rate=rate, min_regret_epsilon=eps,
        min_regret_delta=delta, levels=AS.tree_levels(T),
        **_references(data, learners, gains, meta, inf=points[0][0] == "*"),
    )


def _references(data, learners, gains, meta, *, inf: bool) -> dict[str, Any]:
    """The reference points of one gain matrix: clean learners, best static hospital, uniform."""
    g64 = np.asarray(data.density, np.float64)
    totals = g64.sum(0)
    if inf and meta_eta_at_inf(learners) == 0.0:
        # At mu = inf RW-Meta's learners see the clean gains, so their gains (identical in
        # every run: the learners are deterministic) are the clean learners' gains (tested
        # against evaluate_learners).
        clean = np.asarray(meta["learner_curve"][0, 0], np.float64)  # (T, m)
    else:
        clean = np.asarray(evaluate_learners(learners, gains), np.float64)  # (T, m), no noise
    clean_totals = clean.sum(0)
    best_clean = int(np.argmax(clean_totals))
    return {
        "clean_totals": clean_totals,
        "clean_curve": np.cumsum(clean[:, best_clean]),
        "best_static": float(totals.max()),
        "best_static_curve": np.cumsum(g64[:, int(np.argmax(totals))]),
        "uniform": float(g64.mean(1).sum()),
        "uniform_curve": np.cumsum(g64.mean(1)),
        "advantage": float(clean_totals.max() / totals.max()),
    }


def stand_in(config: Config, state: str, heterogeneity: float) -> covid_data.CovidData:
    """The documented synthetic stand-in of ``state`` (its own key from ``data_seed``)."""
    key = jax.random.fold_in(jax.random.key(config.data_seed), sum(map(ord, state)))
    return covid.synthetic_covid_data(
        key,
        state,
        config.weeks,
        seed_label=f"data_seed={config.data_seed}",
        wave_heterogeneity=float(heterogeneity),
    )


def _real_panel(config: Config, simulate, key, log) -> RealPanel | None:
    """The labelled real-data panel on the shared HHS extract, if there is one."""
    if config.data_dir.lower() == "none":
        return None
    files = covid_data.find_hhs_files(covid_data.shared_covid_dir(config.data_dir))
    if not files:
        log(f"no HHS facility file under {config.data_dir or 'the shared data folder'}: "
            "no real panel")
        return None
    path, states = files[0], {}
    for state in config.real_states:
        try:
            data = covid_data.load_hhs_facility(path, state)
        except ValueError as err:
            log(f"real panel: {state} skipped ({err})")
            continue
        log("real panel: " + covid_data.format_report(data))
        states[state] = study_gains(
            simulate, key, data, f"real-{state}", config.mus, config.readings, ftpl=False
        )
    return RealPanel(path, states) if states else None


def _engine_simulate(algorithm, params, *, key, label: str, **kwargs):
    from ldpjax.engine import simulate

    del label
    return simulate(algorithm, params, key, **kwargs)


def study(
    config: Config,
    key: jax.Array,
    *,
    simulate: Callable[..., Any] | None = None,
    log: Callable[[str], None] = print,
) -> CovidStudy:
    """Run the table, the dynamics sweep and the real-data panel of one configuration.

    ``key`` is the run's key; each part draws ``subkey(key, label)``. ``simulate`` defaults to
    :func:`ldpjax.engine.simulate` (an experiment passes its run context's, which adds
    checkpoints and progress)."""
    base = _engine_simulate if simulate is None else simulate

    def sim(*args, **kwargs):
        return base(*args, num_seeds=config.seeds, **kwargs)

    table = {}
    for state in config.states:
        if config.data_path:
            data = covid_data.load_hhs_facility(
                config.data_path, state, start=config.start or None, end=config.end or None
            )
            log(covid_data.format_report(data))
        else:
            data = stand_in(config, state, config.table_heterogeneity)
        table[state] = study_gains(
            sim, key, data, state, config.mus, config.readings, ftpl=config.with_ftpl
        )
    sweep = []
    for h in config.sweep:
        s = config.sweep_state
        if not config.data_path and s in table and h == config.table_heterogeneity:
            sweep.append((h, table[s]))  # the table's own stand-in
        else:
            data = stand_in(config, s, h)
            sweep.append(
                (h, study_gains(sim, key, data, f"sweep-{s}", config.mus, config.readings,
                                ftpl=False))
            )
    real = None if config.data_path else _real_panel(config, sim, key, log)
    eta_inf = meta_eta_at_inf(paper_learners())
    return CovidStudy(config, eta_inf, table, tuple(sweep), real)


__all__ = [
    "GAIN_RECORD",
    "META_RECORD",
    "Config",
    "CovidStudy",
    "RealPanel",
    "StateStudy",
    "meta_eta_at_inf",
    "parse_config",
    "stand_in",
    "study",
    "study_gains",
]
