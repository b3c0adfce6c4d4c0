"""Experiment-side helpers that run grids of bandit policies through the engine (used by the
``bandits-*`` experiments and the privacy-budgeting notebook): stack per-configuration parameters along one grid axis, pick the exact
per-visitor policy or the block-updated one (long horizons), and summarise regret, clicks and
the realised experiment budget max_t xi_t of every run.

Nothing here adds an algorithm: the policies are :func:`~ldpjax.bandits.epsilon_greedy`,
:func:`~ldpjax.bandits.batched_epsilon_greedy`, :func:`~ldpjax.bandits.gittins_policy` and the
baselines; this module only wires them to :func:`ldpjax.engine.simulate` (or the experiment
context's ``simulate``, which adds checkpoints and progress bars).
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.bandits import (
    GITTINS_HINTS,
    STRATEGIES,
    BlockConfig,
    BlockParams,
    Environment,
    GittinsConfig,
    PolicyConfig,
    batched_epsilon_greedy,
    epsilon_greedy,
    epsilon_greedy_hints,
    epsilon_greedy_params,
    gittins_params,
    gittins_policy,
    max_spend,
    nonprivate_greedy,
    num_blocks,
    regret_bound_constant,
    regret_bound_dynamic,
)
from ldpjax.engine import record, simulate
from ldpjax.types import PRNGKey
from ldpjax_experiments.base import OptionValueError
from ldpjax_experiments.kit import PAPER_TITLES, SE_RULE

# The paper behind the bandits experiments, by its short title (figure titles, descriptions).
PAPER_TITLE = PAPER_TITLES["002"]


# --------------------------------------------------------------------------- initialisation
def parse_init_visits(text) -> int | None:
    """``--init-visits``: ``K`` (None: each run's number of arms) or an integer >= 0."""
    if text is None or str(text).strip().upper() == "K":
        return None
    try:
        value = int(str(text).strip())
    except ValueError:
        raise OptionValueError(f"expects K or an integer >= 0, got {text!r}") from None
    if value < 0:
        raise OptionValueError(f"expects K or an integer >= 0, got {text!r}")
    return value


parse_init_visits.__name__ = "K-or-int"

INIT_VISITS_HELP = (
    "uniform-play visits that start BOTH the constant and the dynamic strategy (and the "
    "non-private benchmark): K (each run's number of arms) or a number; 0 = no uniform start "
    "for the constant strategy (xi_t = gamma from the first visitor) and the dynamic decay's "
    "minimum of one (log 1 = 0 breaks eq. 16). The paper is silent on it")

class PolicyRuns(NamedTuple):
    """One policy's runs at one (K, T) of a bandit study; every array is over the runs (the
    policies of one horizon's grid are paired run by run: common random numbers).

    Attributes:
      K: the number of arms played.
      T: the horizon (visitors).
      policy: ``constant``, ``dynamic`` (capped), ``nonprivate``, ``random``, ``gittins`` or
        ``oracle``.
      gamma: the experiment budget (``inf`` for the no-budget benchmarks, 0 for random play).
      regret: (runs,) expected regret of each run.
      clicks: (runs,) realised clicks of each run.
      spend: (runs,) realised experiment budget max_t xi_t of each run.
      locked: (runs,) 1.0 where the run ends locked in (final greedy arm not a best arm).
      simulation: how it was simulated (``per-visitor``, ``blocks (growth g)``, ``exact
        binomial``).
      bound: the regret bound at (gamma, K, T) with the appendix constants (eq. 15 for
        ``constant``, eq. 18 for ``dynamic``); NaN for the other policies.
      bound_simple: the same bound with the simple constants; NaN for the other policies and
        where a study does not report it.
    """

    K: int
    T: int
    policy: str
    gamma: float
    regret: np.ndarray
    clicks: np.ndarray
    spend: np.ndarray
    locked: np.ndarray
    simulation: str
    bound: float = math.nan
    bound_simple: float = math.nan



def init_config(init_visits: int | None) -> tuple[int | None, bool]:
    """``(init_steps, init_constant)`` of :class:`~ldpjax.bandits.PolicyConfig` for the
    ``--init-visits`` option (see :data:`INIT_VISITS_HELP`)."""
    if init_visits is None:
        return None, True
    if init_visits == 0:
        return 1, False
    return int(init_visits), True


def init_text(init_visits: int | None) -> str:
    """The initialisation in words, for summaries and captions."""
    if init_visits is None:
        return "both strategies start with K uniform-play visits (K = number of arms)"
    if init_visits == 0:
        return ("the constant strategy starts at xi_t = gamma, the dynamic one with one "
                "uniform-play visit")
    return f"both strategies start with {init_visits} uniform-play visits"


# --------------------------------------------------------------------------- paired rules
def paired(a, b) -> tuple[float, float]:
    """Mean and standard error of the run-by-run difference ``a - b``.

    The configurations of one grid share their random numbers per seed (common random
    numbers), so run i of ``a`` and run i of ``b`` are a pair; the SE is that of the paired
    differences (sd with ddof 1 / sqrt(runs); 0 for a single run).
    """
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    if d.size < 2:
        return float(d.mean()), 0.0
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def checked_bounds(policy: str, gamma: float, spend: np.ndarray, arms: int, horizon: int
                   ) -> tuple[float, float]:
    """(bound, bound with the simple constants) of a budgeted policy's runs at (gamma, K, T)
    (eq. 15 for ``constant``, eq. 18 for ``dynamic``; NaN for the other policies), after
    checking that no run spent more than its budget (``RuntimeError``: gamma as stored,
    float32)."""
    if policy not in ("constant", "dynamic"):
        return math.nan, math.nan
    if not np.all(spend <= np.float32(gamma)):
        raise RuntimeError(f"a run spent more than gamma={gamma}")
    fn = regret_bound_constant if policy == "constant" else regret_bound_dynamic
    return float(fn(gamma, arms, horizon)), float(fn(gamma, arms, horizon, form="simple"))


def significant(mean: float, se: float) -> bool:
    """``mean > SE_RULE * se`` (strict: a difference of exactly 2 SE is not significant)."""
    return bool(mean > SE_RULE * se)


def constant_peak(regret, gammas: Sequence[float]) -> dict:
    """Does the constant strategy's regret fall to a middle gamma and then rise again?

    ``regret``: (len(gammas), runs) per-run regrets on ascending ``gammas``. The best gamma
    is the one with the smallest mean; the rise is the paired difference R(top) - R(best).

    Returns a dict with ``best`` (index), ``best_gamma``, ``rise``, ``rise_se``, ``last_step``
    (paired mean and SE of R(top) - R(next to top)), ``means``, ``runs`` and ``cell``: ``"peak"`` (best gamma inside the grid and the rise > 2 paired SE),
    ``"unresolved"`` (inside, but the rise within 2 SE) or ``"edge"`` (still falling at the
    grid's top gamma).
    """
    regret = np.asarray(regret, np.float64)
    means = regret.mean(axis=1)
    best = int(np.argmin(means))
    top = len(gammas) - 1
    if best == top:
        rise, se = 0.0, 0.0
        cell = "edge"
    else:
        rise, se = paired(regret[top], regret[best])
        cell = "peak" if significant(rise, se) else "unresolved"
    # the last step of the grid, R(top) - R(top - 1): negative where still falling
    last = paired(regret[top], regret[top - 1]) if top > 0 else (0.0, 0.0)
    return {"best": best, "best_gamma": float(gammas[best]), "rise": rise, "rise_se": se,
            "last_step": last, "runs": int(regret.shape[1]), "cell": cell,
            "means": means.tolist()}


def grows(values: Sequence[tuple[float, float]]) -> list[bool | None]:
    """For consecutive (mean, se) of independent samples: True where the next mean is larger
    by > 2 SE of the difference, False where it is smaller by > 2 SE, None in between."""
    out: list[bool | None] = []
    for (a, sa), (b, sb) in zip(values[:-1], values[1:], strict=True):
        se = math.hypot(sa, sb)
        out.append(True if significant(b - a, se) else False if significant(a - b, se) else None)
    return out


def fmt(x: float) -> str:
    """A number for verdict reasons: 3 significant digits, no exponent below 1e6."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1e6:
        return f"{x:.3g}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def horizon_text(horizon: float) -> str:
    """1e4 for 10000 (compact horizon labels in verdict reasons)."""
    horizon = float(horizon)
    exp = round(math.log10(horizon)) if horizon > 0 else 0
    if exp >= 1 and 10.0**exp == horizon:
        return f"1e{exp}"
    return f"{horizon:g}"


class PolicyLabel(NamedTuple):
    policy: str  # "constant", "dynamic" (capped), "nonprivate", "random", "gittins", "oracle"
    gamma: float  # budget (nan where it does not apply)


class GridResult(NamedTuple):
    labels: list[PolicyLabel]
    regret: np.ndarray  # (configs, seeds) expected regret per run
    clicks: np.ndarray  # (configs, seeds) realised clicks per run
    spend: np.ndarray  # (configs, seeds) realised experiment budget max_t xi_t
    exact: bool  # per-visitor policy (True) or block-updated (False)
    # (configs, seeds) 1.0 where the run ends locked in: its final greedy arm (argmax of the
    # estimated CTRs) is not a best arm (a tie that includes a best arm counts as not locked)
    locked: np.ndarray | None = None


def locked_in(state, ctr, num_arms) -> np.ndarray:
    """1.0 per run (and segment 0) whose final greedy arm is not a best arm, else 0.0.

    ``state`` is a final :class:`~ldpjax.bandits.BanditState` with leading (configs, seeds)
    axes; ``ctr`` (configs, J, K_max) and ``num_arms`` (configs,) the stacked environments.
    The greedy arm is the argmax of the estimated CTRs (0 before an arm's first show, as in
    the policy); a tie that includes a best arm counts as not locked in.
    """
    shows = np.asarray(state.shows, np.float64)[..., 0, :]  # (configs, seeds, K_max)
    clicks = np.asarray(state.clicks, np.float64)[..., 0, :]
    q = np.divide(clicks, shows, out=np.zeros_like(clicks), where=shows > 0)
    ctr0 = np.asarray(ctr, np.float64)[:, 0, :]  # (configs, K_max)
    valid = np.arange(ctr0.shape[-1])[None, :] < np.asarray(num_arms)[:, None]
    best = valid & (ctr0 >= np.max(np.where(valid, ctr0, -np.inf), -1, keepdims=True))
    q = np.where(valid[:, None, :], q, -np.inf)
    top = np.max(q, -1)
    best_q = np.max(np.where(best[:, None, :], q, -np.inf), -1)
    return (best_q < top).astype(np.float64)


# --------------------------------------------------------------------------- figures
def gamma_axis(ax, ticks, *, min_gap: float = 0.3) -> None:
    """A log x axis with ``ticks`` (the budget grid) as plain labels: a tick closer than
    ``min_gap`` decades to a labelled one keeps its tick mark without a label (the first and
    the last tick are always labelled), so that the labels never run into each other."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ticks = sorted({float(g) for g in ticks if g > 0})
    labelled = []
    for g in ticks:
        if not labelled or math.log10(g / labelled[-1]) >= min_gap:
            labelled.append(g)
    if ticks and labelled[-1] != ticks[-1]:  # the last tick wins over its close neighbour
        if len(labelled) > 1 and math.log10(ticks[-1] / labelled[-1]) < min_gap:
            labelled.pop()
        labelled.append(ticks[-1])
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(labelled))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_locator(FixedLocator([g for g in ticks if g not in labelled]))
    ax.xaxis.set_minor_formatter(NullFormatter())


def stack_params(params: Sequence[Any]):
    """Stack a list of parameter pytrees along a new leading grid axis."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *params)


def resolve_data_dir(option: str = "") -> Path | None:
    """The shared data folder: the option if given, else ``$LDPJAX_SHARED_DATA`` if set (and
    then only it: an empty folder there runs as a clone without data does), else
    ``../shared/data`` relative to the working directory or to the repository; None if none
    exists (use a stand-in)."""
    env = os.environ.get("LDPJAX_SHARED_DATA")
    candidates = [Path(option)] if option else [Path(env)] if env else [
        Path("../shared/data"),
        Path.cwd() / ".." / "shared" / "data",
        Path(__file__).resolve().parents[2].parent / "shared" / "data",
    ]
    for path in candidates:
        if path.is_dir():
            return path
    return None


def epsilon_greedy_grid(
    env: Environment, gammas: Sequence[float], *, strategies=("constant", "capped"),
    nonprivate: bool = True, random: bool = True,
):
    """Parameters (stacked) and labels: each strategy x gamma, then non-private and random."""
    params, labels = [], []
    for strategy in strategies:
        for gamma in gammas:
            params.append(epsilon_greedy_params(env, strategy, gamma))
            name = "dynamic" if strategy == "capped" else strategy
            labels.append(PolicyLabel(name, float(gamma)))
    if nonprivate:
        params.append(nonprivate_greedy(env))
        labels.append(PolicyLabel("nonprivate", math.inf))
    if random:
        params.append(epsilon_greedy_params(env, "constant", 0.0))
        labels.append(PolicyLabel("random", 0.0))
    return stack_params(params), labels


def run_epsilon_greedy_grid(
    simulate_fn: Callable, params, labels, horizon: int, *, exact: bool, growth: float = 0.01,
    num_segments: int = 1, max_arms: int = 2, label: str = "grid",
    init_steps: int | None = None, init_constant: bool = False,
) -> GridResult:
    """Run stacked epsilon-greedy params for ``horizon`` visitors (per visitor or in blocks).

    ``simulate_fn(algorithm, params, num_steps, label=..., grid_ndim=1, record=..., hints=...)``
    is ``ctx.simulate`` in experiments or :func:`default_simulate`. ``init_steps`` and
    ``init_constant`` are those of :class:`~ldpjax.bandits.PolicyConfig` (the uniform-play
    start of the dynamic schedules and, with ``init_constant``, of the constant strategy too).
    The grid's configurations share their random numbers per seed (the engine's common random
    numbers), so differences between configurations can be paired run by run.
    """
    if exact:
        policy = PolicyConfig(num_segments, max_arms, init_steps=init_steps,
                              init_constant=init_constant)
        rec = record.combine(regret=record.total(lambda o: o.regret),
                             clicks=record.total(lambda o: o.click), spend=max_spend())
        res = simulate_fn(epsilon_greedy(policy), params, horizon, label=label, grid_ndim=1,
                          record=rec, hints=epsilon_greedy_hints(policy))
    else:
        alg = batched_epsilon_greedy(BlockConfig(num_segments, max_arms, growth=growth,
                                                 init_steps=init_steps,
                                                 init_constant=init_constant))
        n = jax.tree_util.tree_leaves(params)[0].shape[0]
        block = BlockParams(params, jnp.full((n,), horizon, jnp.int32), jnp.zeros((n,), jnp.int32))
        rec = record.combine(regret=record.total(lambda o: o.regret),
                             clicks=record.total(lambda o: o.clicks), spend=max_spend())
        res = simulate_fn(alg, block, num_blocks(horizon, growth), label=label, grid_ndim=1,
                          record=rec)
        if not np.all(res.state.t == horizon):
            raise RuntimeError("block schedule did not cover the horizon")
    return GridResult(labels, np.asarray(res.record["regret"], np.float64),
                      np.asarray(res.record["clicks"], np.float64),
                      np.asarray(res.record["spend"], np.float64), exact,
                      locked_in(res.state, params.ctr, params.num_arms))


_GITTINS_GRIDS: dict[tuple, Any] = {}


def _gittins_grid(env: Environment, config: GittinsConfig, discount: float):
    """``stack_params([gittins_params(env, config, discount)])``, kept per (environment,
    config, discount): the index table does not depend on the horizon, so a study that runs
    the benchmark at several horizons computes it once."""
    leaves = tuple(np.asarray(x).tobytes() + str(np.asarray(x).dtype).encode()
                   for x in (env.ctr, env.segment_probs, env.num_arms))
    key = (leaves, config, discount, jax.config.jax_enable_x64)
    if key not in _GITTINS_GRIDS:
        if len(_GITTINS_GRIDS) >= 8:
            _GITTINS_GRIDS.clear()
        _GITTINS_GRIDS[key] = stack_params([gittins_params(env, config, discount)])
    return _GITTINS_GRIDS[key]


def run_gittins(simulate_fn: Callable, env: Environment, horizon: int, *, discount: float,
                max_count: int, num_segments: int = 1, max_arms: int = 2,
                label: str = "gittins") -> GridResult:
    """The Gittins-index benchmark, one visitor per step."""
    config = GittinsConfig(PolicyConfig(num_segments, max_arms), max_count=max_count,
                           max_discount=discount)
    rec = record.combine(regret=record.total(lambda o: o.regret),
                         clicks=record.total(lambda o: o.click), spend=max_spend())
    params = _gittins_grid(env, config, float(discount))
    res = simulate_fn(gittins_policy(config), params, horizon, label=label, grid_ndim=1,
                      record=rec, hints=GITTINS_HINTS)
    locked = None
    if hasattr(res.state, "shows"):
        locked = locked_in(res.state, env.ctr[None], np.asarray(env.num_arms)[None])
    return GridResult([PolicyLabel("gittins", math.inf)], np.asarray(res.record["regret"],
                      np.float64), np.asarray(res.record["clicks"], np.float64),
                      np.asarray(res.record["spend"], np.float64), True, locked)


def oracle_clicks(key: PRNGKey, env: Environment, horizon: int, num_seeds: int) -> GridResult:
    """Perfect information with one segment: clicks ~ Binomial(T, mu*) exactly, regret 0."""
    if env.ctr.shape[0] != 1:
        raise ValueError("oracle_clicks needs a single segment (use oracle_policy otherwise)")
    best = float(jnp.max(jnp.where(jnp.arange(env.ctr.shape[1]) < env.num_arms, env.ctr[0],
                                   -1.0)))
    clicks = jax.random.binomial(key, float(horizon), best, (1, num_seeds))
    zeros = np.zeros((1, num_seeds))
    # it always shows the best arm: never locked in
    return GridResult([PolicyLabel("oracle", math.inf)], zeros, np.asarray(clicks, np.float64),
                      zeros, True, zeros)


def default_simulate(key: PRNGKey, num_seeds: int) -> Callable:
    """A ``simulate_fn`` over :func:`ldpjax.engine.simulate` (no checkpoints) for notebooks."""

    def run(algorithm, params, num_steps, *, label, **kwargs):
        sub = jax.random.fold_in(key, zlib.crc32(label.encode()) & 0x7FFFFFFF)
        return simulate(algorithm, params, sub, num_steps, num_seeds=num_seeds,
                        keep_state=True, **kwargs)

    return run


def strategy_code_of(label: PolicyLabel) -> int:
    return {"constant": STRATEGIES["constant"], "dynamic": STRATEGIES["capped"]}[label.policy]


__all__ = [
    "checked_bounds",
    "INIT_VISITS_HELP",
    "PAPER_TITLE",
    "PolicyRuns",
    "GridResult",
    "PolicyLabel",
    "constant_peak",
    "default_simulate",
    "epsilon_greedy_grid",
    "fmt",
    "gamma_axis",
    "grows",
    "horizon_text",
    "init_config",
    "init_text",
    "locked_in",
    "oracle_clicks",
    "paired",
    "parse_init_visits",
    "resolve_data_dir",
    "run_epsilon_greedy_grid",
    "run_gittins",
    "significant",
    "stack_params",
    "strategy_code_of",
]
