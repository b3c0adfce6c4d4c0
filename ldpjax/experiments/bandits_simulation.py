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
    STRATEGIES,
    BlockConfig,
    BlockParams,
    Environment,
    GittinsConfig,
    PolicyConfig,
    batched_epsilon_greedy,
    epsilon_greedy,
    epsilon_greedy_params,
    gittins_params,
    gittins_policy,
    max_spend,
    nonprivate_greedy,
    num_blocks,
)
from ldpjax.engine import record, simulate
from ldpjax.types import PRNGKey


class PolicyLabel(NamedTuple):
    policy: str  # "constant", "dynamic" (capped), "nonprivate", "random", "gittins", "oracle"
    gamma: float  # budget (nan where it does not apply)


class GridResult(NamedTuple):
    labels: list[PolicyLabel]
    regret: np.ndarray  # (configs, seeds) expected regret per run
    clicks: np.ndarray  # (configs, seeds) realised clicks per run
    spend: np.ndarray  # (configs, seeds) realised experiment budget max_t xi_t
    exact: bool  # per-visitor policy (True) or block-updated (False)


def stack_params(params: Sequence[Any]):
    """Stack a list of parameter pytrees along a new leading grid axis."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *params)


def resolve_data_dir(option: str = "") -> Path | None:
    """The shared data folder: the option if given, else ``../shared/data`` relative to the
    working directory or to the repository; None if none exists (use a stand-in)."""
    candidates = [Path(option)] if option else [
        Path(os.environ.get("LDPJAX_SHARED_DATA", "../shared/data")),
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
) -> GridResult:
    """Run stacked epsilon-greedy params for ``horizon`` visitors (per visitor or in blocks).

    ``simulate_fn(algorithm, params, num_steps, label=..., grid_ndim=1, record=...)`` is
    ``ctx.simulate`` in experiments or :func:`default_simulate`.
    """
    if exact:
        alg = epsilon_greedy(PolicyConfig(num_segments, max_arms))
        rec = record.combine(regret=record.total(lambda o: o.regret),
                             clicks=record.total(lambda o: o.click), spend=max_spend())
        res = simulate_fn(alg, params, horizon, label=label, grid_ndim=1, record=rec)
    else:
        alg = batched_epsilon_greedy(BlockConfig(num_segments, max_arms, growth=growth))
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
                      np.asarray(res.record["spend"], np.float64), exact)


def run_gittins(simulate_fn: Callable, env: Environment, horizon: int, *, discount: float,
                max_count: int, num_segments: int = 1, max_arms: int = 2,
                label: str = "gittins") -> GridResult:
    """The Gittins-index benchmark, one visitor per step."""
    config = GittinsConfig(PolicyConfig(num_segments, max_arms), max_count=max_count,
                           max_discount=discount)
    rec = record.combine(regret=record.total(lambda o: o.regret),
                         clicks=record.total(lambda o: o.click), spend=max_spend())
    params = stack_params([gittins_params(env, config, discount)])
    res = simulate_fn(gittins_policy(config), params, horizon, label=label, grid_ndim=1,
                      record=rec)
    return GridResult([PolicyLabel("gittins", math.inf)], np.asarray(res.record["regret"],
                      np.float64), np.asarray(res.record["clicks"], np.float64),
                      np.asarray(res.record["spend"], np.float64), True)


def oracle_clicks(key: PRNGKey, env: Environment, horizon: int, num_seeds: int) -> GridResult:
    """Perfect information with one segment: clicks ~ Binomial(T, mu*) exactly, regret 0."""
    if env.ctr.shape[0] != 1:
        raise ValueError("oracle_clicks needs a single segment (use oracle_policy otherwise)")
    best = float(jnp.max(jnp.where(jnp.arange(env.ctr.shape[1]) < env.num_arms, env.ctr[0],
                                   -1.0)))
    clicks = jax.random.binomial(key, float(horizon), best, (1, num_seeds))
    zeros = np.zeros((1, num_seeds))
    return GridResult([PolicyLabel("oracle", math.inf)], zeros, np.asarray(clicks, np.float64),
                      zeros, True)


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
    "GridResult",
    "PolicyLabel",
    "default_simulate",
    "epsilon_greedy_grid",
    "oracle_clicks",
    "resolve_data_dir",
    "run_epsilon_greedy_grid",
    "run_gittins",
    "stack_params",
    "strategy_code_of",
]
