"""Conformance cases of the experts family (paper 000): RW-FTPL, RW-AdaBatch (fast and sampling
paths), RW-Meta and Agarwal & Singh, at n = 4 experts and T = 16 rounds.

Budget = mu (per-round GDP parameter of the local release; for A&S the central GDP parameter of
the tree, through Min Noise: node sd = sqrt(L) sqrt(n) / mu). ``make_params`` never checks its
budget (so that ``validate`` is the one that rejects concrete invalid budgets, naming the leaf)
and is traceable: a traced invalid mu reaches the mechanisms, which make every release NaN.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ldpjax.experts import (
    AdaBatchConfig,
    FTPLConfig,
    adabatch_params,
    bernoulli_gains,
    ftpl_params,
    leader_family,
    learner_set,
    meta_params,
    ridge_family,
    rw_adabatch,
    rw_ftpl,
    rw_meta_algorithm,
)
from ldpjax.experts import agarwal_singh as AS
from tests.conformance.case import ConformanceCase

N, T = 4, 16
BUDGETS = (0.5, 2.0)
INVALID = (float("nan"), -1.0, 0.0, float("-inf"))
LEARNERS = learner_set(ridge_family(windows=(4,), strengths=("weak",)), leader_family())


def _gains():
    return bernoulli_gains(jax.random.key(0), T, N, 0.3)


def _bad_gains():
    return _gains().at[3, 2].set(1.5)


def _mu(budget):
    return jnp.asarray(budget, jnp.result_type(float))


def _all_nan(x, axes):
    return jnp.all(jnp.isnan(x), axis=axes)


def _ftpl_case() -> ConformanceCase:
    return ConformanceCase(
        name="experts/rw_ftpl",
        algorithm=rw_ftpl(FTPLConfig(N)),
        make_params=lambda b: ftpl_params(1.0)._replace(mu=_mu(b)),
        budgets=BUDGETS,
        invalid_budgets=INVALID,
        num_steps=T,
        inputs=_gains(),
        bad_inputs=_bad_gains(),
        scalar=lambda state, outs: jnp.sum(state.noisy_total),
        is_closed=lambda state, outs: _all_nan(state.noisy_total, -1),
    )


def _adabatch_case(fast: bool) -> ConformanceCase:
    return ConformanceCase(
        name=f"experts/rw_adabatch_{'fast' if fast else 'sampling'}",
        algorithm=rw_adabatch(AdaBatchConfig(N, fast=fast)),
        make_params=lambda b: adabatch_params(1.0, 0.5)._replace(mu=_mu(b)),
        budgets=BUDGETS,
        invalid_budgets=INVALID,
        num_steps=T,
        inputs=_gains(),
        bad_inputs=_bad_gains(),
        scalar=lambda state, outs: jnp.sum(state.noisy_total),
        is_closed=lambda state, outs: _all_nan(state.noisy_total, -1),
    )


def _meta_case() -> ConformanceCase:
    return ConformanceCase(
        name="experts/rw_meta",
        algorithm=rw_meta_algorithm(LEARNERS, N),
        make_params=lambda b: meta_params(1.0, LEARNERS)._replace(mu=_mu(b)),
        budgets=BUDGETS,
        invalid_budgets=INVALID,
        num_steps=T,
        inputs=_gains(),
        bad_inputs=_bad_gains(),
        scalar=lambda state, outs: jnp.sum(state.scores),
        is_closed=lambda state, outs: _all_nan(state.scores, -1),
    )


def _tree_params(budget):
    """Min Noise at central budget mu, computed without checks: NaN node sd for invalid mu."""
    mu = _mu(budget)
    sd = math.sqrt(AS.tree_levels(T) * N) / jnp.where(mu > 0, mu, 1.0)
    sd = jnp.where(mu > 0, jnp.where(jnp.isinf(mu), 0.0, sd), jnp.nan)
    return AS.TreeHedgeParams(sd, jnp.full_like(sd, AS.standard_learning_rate(N, T)))


def _tree_case() -> ConformanceCase:
    return ConformanceCase(
        name="experts/agarwal_singh",
        algorithm=AS.tree_hedge(AS.TreeHedgeConfig(N, T)),
        make_params=_tree_params,
        budgets=BUDGETS,
        invalid_budgets=INVALID,
        num_steps=T,
        inputs=_gains(),
        bad_inputs=_bad_gains(),
        scalar=lambda state, outs: jnp.sum(state.noisy_nodes),
        is_closed=lambda state, outs: _all_nan(state.noisy_nodes, (-2, -1)),
    )


def cases() -> list[ConformanceCase]:
    return [
        _ftpl_case(),
        _adabatch_case(True),
        _adabatch_case(False),
        _meta_case(),
        _tree_case(),
    ]
