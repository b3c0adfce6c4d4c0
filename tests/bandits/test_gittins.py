"""Gittins indices: the NumPy reference against an independent brute-force dynamic programme,
the JAX port (discount and prior as params leaves) against the NumPy reference, and the
policy's validation and fail-closed behaviour."""

from __future__ import annotations

import functools
import math
import sys

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

from ldpjax import bandits
from ldpjax.accounting import NoPrivacyEvent
from ldpjax.bandits.gittins import IndexTable, gittins_index_table


def brute_force_index(a: float, b: float, discount: float, depth: int) -> float:
    """Calibration by memoised recursion on the Beta(a, b) tree and brentq on the price.

    V(a, b, k) = max(lambda / (1 - d), mu + d [mu V(a+1, b, k+1) + (1 - mu) V(a, b+1, k+1)]),
    frozen at depth ``depth`` as max(lambda, mu) / (1 - d); the index is the lambda at which
    the root state is indifferent between continuing and retiring.
    """
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def advantage(lam):
        retire = lam / (1 - discount)

        @functools.cache
        def value(x, y, k):
            mu = x / (x + y)
            if k == depth:
                return max(retire, mu / (1 - discount))
            cont = mu + discount * (mu * value(x + 1, y, k + 1) + (1 - mu) * value(x, y + 1, k + 1))
            return max(retire, cont)

        mu = a / (a + b)
        return mu + discount * (mu * value(a + 1, b, 1) + (1 - mu) * value(a, b + 1, 1)) - retire

    return brentq(advantage, 1e-9, 1 - 1e-9, xtol=1e-13)


@pytest.fixture(scope="module")
def table_09():
    return bandits.gittins_table(6, 0.9, num_prices=512)


@pytest.mark.parametrize("s, f", [(0, 0), (1, 0), (0, 1), (2, 3), (5, 1), (0, 6), (3, 3)])
def test_table_matches_brute_force(table_09, s, f):
    # depth 160: 0.9^160 = 5e-8 of the value is frozen, far below the tolerance
    exact = brute_force_index(1.0 + s, 1.0 + f, 0.9, 160)
    # the table's own certified interpolation bound, plus its truncation (0.9^66 ~ 1e-3 of the
    # value frozen at a concentrated posterior; measured effect < 1e-6)
    assert abs(table_09.index[s, f] - exact) <= table_09.interpolation_error + 1e-6
    assert table_09.index[s, f] >= (1 + s) / (2 + s + f)  # index >= posterior mean


def test_known_value_and_structure(table_09):
    # Gittins' tables (Bernoulli, uniform prior, discount 0.9): nu(1, 1) = 0.7029
    assert table_09.index[0, 0] == pytest.approx(0.7029, abs=1e-4)
    idx = table_09.index
    n = idx.shape[0]
    for s in range(n - 1):
        for f in range(n - 1 - s):
            if s + f + 1 < n:
                assert idx[s + 1, f] > idx[s, f]  # a success raises the index
                assert idx[s, f + 1] < idx[s, f]  # a failure lowers it
    assert np.isnan(idx[n - 1, 1])  # outside the table


def test_prior_and_discount_change_the_table():
    t1 = bandits.gittins_table(3, 0.9, prior=(2.0, 1.0), num_prices=512)
    exact = brute_force_index(2.0, 1.0, 0.9, 160)
    assert abs(t1.index[0, 0] - exact) <= t1.interpolation_error + 1e-6
    t2 = bandits.gittins_table(3, 0.95, num_prices=512)
    assert abs(t2.index[1, 1] - brute_force_index(2.0, 2.0, 0.95, 300)) <= (
        t2.interpolation_error + 1e-6)


def test_extrapolation_beyond_the_table():
    small = bandits.gittins_table(40, 0.9, num_prices=512)
    large = bandits.gittins_table(80, 0.9, num_prices=512)
    s = np.arange(0, 61)
    f = 60 - s
    # one jitted lookup over both probes (eagerly every jnp op would compile per shape)
    s_in = np.arange(41)
    both = np.asarray(jax.jit(lambda ss, ff: bandits.gittins_index(small, ss, ff))(
        np.concatenate([s, s_in]), np.concatenate([f, 40 - s_in])))
    ext, inside = both[:61], both[61:]
    mean = (1 + s) / 62
    true = large.index[s, f]
    # inside the table the lookup is exact; at the edge the extrapolation is continuous
    assert np.allclose(inside, small.index[s_in, 40 - s_in], atol=1e-6)
    # beyond it the 1/n bonus extrapolation keeps the bonus within 40% and the index within
    # 2e-3 of the table that covers n = 60 (the bonus itself is ~1e-2 here)
    assert np.all(np.abs(ext - true) <= 2e-3)
    assert np.all(np.abs((ext - mean) - (true - mean)) <= 0.4 * (true - mean))


def test_diagonal_interpolation_equals_jnp_interp():
    # the policy's closed-form interpolation on the evenly spaced diagonal means against
    # jnp.interp on the same grid: equal up to the rounding of the two formulas (a few ulp
    # of the bonus), clamped alike beyond both ends; a one-entry diagonal is a constant
    from ldpjax.bandits.gittins import _interp_diagonal

    dtype = jnp.result_type(float)
    tol = 8 * float(jnp.finfo(dtype).eps)
    for n_max, (a0, b0) in ((40, (1.0, 1.0)), (7, (0.5, 2.0)), (0, (1.0, 1.0))):
        values = jnp.asarray(np.sin(np.arange(n_max + 1) * 0.7) * 0.01 + 0.02, dtype)
        width = a0 + b0 + n_max
        grid = (a0 + np.arange(n_max + 1)) / width
        x = jnp.asarray(np.linspace(-0.2, 1.2, 2001), dtype)
        got = np.asarray(jax.jit(_interp_diagonal)(values, x * width - a0))
        want = np.asarray(jnp.interp(x, jnp.asarray(grid, dtype), values))
        assert np.max(np.abs(got - want)) <= tol, (n_max, np.max(np.abs(got - want)))


@pytest.mark.parametrize("call, name", [
    (lambda: bandits.gittins_table(-1, 0.9), "max_count"),
    (lambda: bandits.gittins_table(5, 1.0), "discount"),
    (lambda: bandits.gittins_table(5, 0.9, prior=(0.0, 1.0)), "prior"),
    (lambda: bandits.gittins_table(5, 0.9, num_prices=4), "num_prices"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


# --------------------------------------------------------------------------------------------
# JAX port: discount and prior are params leaves


def _config(max_count, max_discount, num_prices, policy=None):
    policy = bandits.PolicyConfig() if policy is None else policy
    return bandits.GittinsConfig(policy, max_count=max_count, max_discount=max_discount,
                                 num_prices=num_prices)


PORT_CASES = [  # (max_count, discount, num_prices, prior)
    (6, 0.95, 128, (1.0, 1.0)),
    (6, 0.9, 512, (1.0, 1.0)),
    (8, 0.95, 256, (2.0, 1.0)),
    (10, 0.7, 128, (0.5, 3.0)),
]
# every case is a new table shape (a compilation, ~3 CPU s each): the fast suite checks the
# first, whose float32 table (N = 6, max_discount 0.95, 128 prices) is CFG below, shared by
# every float32 test of this module (one build compilation); the other grids, depths and
# priors run behind ``slow``
PORT_PARAMS = [PORT_CASES[0], *(pytest.param(*case, marks=pytest.mark.slow)
                                for case in PORT_CASES[1:])]
CFG = _config(6, 0.95, 128)


@pytest.mark.parametrize("n, discount, prices, prior", PORT_PARAMS)
def test_jax_port_equals_numpy_reference_in_float64(x64, n, discount, prices, prior):
    # Same grid, same depth (max_discount = discount), same bracket formulas: in float64 the two
    # differ only by the order of rounding, each within the port's rounding bound of exact
    # arithmetic (a bracket could flip only for a root within ~1e-13 of a grid price).
    table = gittins_index_table(_config(n, discount, prices), discount, prior)
    ref = bandits.gittins_table(n, discount, prior=prior, num_prices=prices)
    assert table.index.dtype == jnp.float64
    got = np.asarray(table.index)
    assert np.array_equal(np.isnan(got), np.isnan(ref.index))
    assert np.nanmax(np.abs(got - ref.index)) <= 2 * float(table.rounding_error)
    assert float(table.interpolation_error) == pytest.approx(ref.interpolation_error, rel=1e-9)
    assert 0 < float(table.rounding_error) < 1e-10


@pytest.mark.parametrize("n, discount, prices, prior", PORT_PARAMS[:2])
def test_jax_port_in_float32_within_certified_bounds(n, discount, prices, prior):
    # Both tables are midpoints of brackets around the same exact roots (same depth): the
    # reference within its half-width (plus float64 rounding, 2^-29 of the float32 bound), the
    # port within its half-width plus its float32 rounding bound.
    # a float32 discount builds a float32 table, with or without jax_enable_x64
    table = gittins_index_table(_config(n, discount, prices), np.float32(discount), prior)
    assert table.index.dtype == jnp.float32
    d32 = float(np.float32(discount))  # the discount the port actually used
    ref = bandits.gittins_table(n, d32, prior=prior, num_prices=prices,
                                extra_depth=_config(n, discount, prices).depth - n)
    rounding = float(table.rounding_error)
    tol = ref.interpolation_error + float(table.interpolation_error) + rounding * (1 + 2**-29)
    got = np.asarray(table.index, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref.index))
    assert np.nanmax(np.abs(got - ref.index)) <= tol
    # the rounding bound is what it claims: 16 u / ((1 - delta) |D'|) >= 16 u / (1 - delta)
    assert rounding >= 16 * np.finfo(np.float32).eps / 2 / (1 - d32)


@pytest.mark.slow
def test_default_table_matches_reference_at_discount_099():
    # the experiments' table (N = 100, delta = 0.99, 1024 prices) in float32; the same check
    # at a small table runs fast in test_jax_port_in_float32_within_certified_bounds
    cfg = _config(100, 0.99, 1024)
    table = gittins_index_table(cfg, 0.99)
    ref = bandits.gittins_table(100, float(np.float32(0.99)), num_prices=1024,
                                extra_depth=cfg.depth - 100)
    tol = (ref.interpolation_error + float(table.interpolation_error)
           + float(table.rounding_error) * (1 + 2**-29))
    assert np.nanmax(np.abs(np.asarray(table.index, np.float64) - ref.index)) <= tol


SWEEP_DISCOUNTS = (0.5, 0.8, 0.95, 0.9, 0.9, 0.9)  # the discount sweep, then the prior sweep
SWEEP_PRIORS = ((1.0, 1.0),) * 4 + ((2.0, 1.0), (1.0, 3.0))


@pytest.fixture(scope="module")
def sweep():
    """One jitted vmap over (discount, prior) pairs (both are params leaves): the discount
    sweep at the uniform prior and the prior sweep at discount 0.9, one compilation."""
    env = bandits.make_environment([0.3, 0.2])

    @chex.assert_max_traces(n=1)
    def run(discounts, priors):
        return jax.vmap(lambda d, p: bandits.gittins_params(env, CFG, d, p))(discounts, priors)

    run = jax.jit(run)
    return run, run(jnp.array(SWEEP_DISCOUNTS), jnp.array(SWEEP_PRIORS))


def test_discount_sweep_is_one_vmap_compiled_once(sweep):
    run, grid = sweep
    new = (0.6, 0.7, 0.9)
    again = run(jnp.array(new + SWEEP_DISCOUNTS[3:]), jnp.array(SWEEP_PRIORS))  # same trace
    assert grid.index.shape == (6, 7, 7) and again.discount.shape == (6,)
    # each grid point is the table of its own discount (vmap vs one call: rounding only; the
    # single calls share the module's one unbatched CFG compilation)
    for i, d in enumerate(new):
        one = gittins_index_table(CFG, d)
        diff = np.nanmax(np.abs(np.asarray(again.index[i]) - np.asarray(one.index)))
        assert diff <= 2 * (float(one.rounding_error) + float(one.interpolation_error))
    # a more patient player explores more: the index of the fresh arm grows with the discount
    assert np.all(np.diff(np.asarray(grid.index[:3, 0, 0])) > 0)
    # the stacked grid is valid params for the policy (validate recomputes every table)
    bandits.gittins_policy(CFG).validate(grid, None)


def test_prior_is_a_leaf_too(sweep):
    _, grid = sweep
    tables = grid.index[3:]  # discount 0.9, priors (1, 1), (2, 1), (1, 3)
    for i in range(3):
        one = gittins_index_table(CFG, 0.9, jnp.array(SWEEP_PRIORS[3 + i]))
        tol = 2 * (float(one.rounding_error) + float(one.interpolation_error))
        assert np.nanmax(np.abs(np.asarray(tables[i]) - np.asarray(one.index))) <= tol
    assert np.array_equal(np.asarray(grid.prior[3:]), np.array(SWEEP_PRIORS[3:], np.float32))
    # a more optimistic prior raises the index of every state
    assert np.all(np.nan_to_num(np.asarray(tables[1] - tables[0]), nan=1.0) > 0)
    assert np.all(np.nan_to_num(np.asarray(tables[0] - tables[2]), nan=1.0) > 0)


def test_policy_index_equals_the_reference_lookup():
    # the policy's lookup (table inside, 1/n extrapolation outside) on the params table equals
    # gittins_index on the NumPy table, within the float32 table bounds
    # CFG (N = 6, 128 prices, depth for 0.95) at discount 0.9: the module's one compilation
    cfg = CFG
    env = bandits.make_environment([0.3, 0.2])
    params = bandits.gittins_params(env, cfg, 0.9)
    ref = bandits.gittins_table(6, float(np.float32(0.9)), num_prices=128,
                                extra_depth=cfg.depth - 6)
    s = np.array([0, 3, 6, 0, 4, 15, 2])
    f = np.array([0, 2, 0, 6, 5, 3, 18])  # the last three lie beyond n = 6
    # both lookups in one jit (eagerly each jnp op compiles on its own)
    got, want = (np.asarray(x, np.float64) for x in jax.jit(
        lambda ss, ff: (bandits.gittins_index(params, ss, ff),
                        bandits.gittins_index(ref, ss, ff)))(s, f))
    table = gittins_index_table(cfg, 0.9)
    # the extrapolation is 1 + (N + a0 + b0) / (n + a0 + b0) <= 2 times a table error
    tol = 2 * (ref.interpolation_error + float(table.interpolation_error)
               + float(table.rounding_error))
    assert np.all(np.abs(got - want) <= tol)


def _params(discount=0.9, prior=(1.0, 1.0), cfg=None):
    # CFG's table size (N = 6, 128 prices, max_discount 0.95): the table build compiles once
    cfg = cfg or _config(6, 0.95, 128, bandits.PolicyConfig(max_arms=3))
    return cfg, bandits.gittins_params(bandits.make_environment([0.5, 0.3, 0.1]), cfg,
                                       discount, prior)


@pytest.mark.parametrize("change, name", [
    (lambda p: p._replace(discount=jnp.float32(0.96)), "discount"),  # > max_discount
    (lambda p: p._replace(discount=jnp.float32(1.0)), "discount"),
    (lambda p: p._replace(discount=jnp.float32(0.0)), "discount"),
    (lambda p: p._replace(discount=jnp.float32(np.nan)), "discount"),
    (lambda p: p._replace(prior=jnp.array([0.0, 1.0])), "prior"),
    (lambda p: p._replace(prior=jnp.array([1.0, np.inf])), "prior"),
    (lambda p: p._replace(prior=jnp.array([1.0, 1.0, 1.0])), "prior"),
    (lambda p: p._replace(index=p.index[:-1, :-1]), "index"),
    (lambda p: p._replace(discount=jnp.float32(0.8)), "index"),  # stale table
    (lambda p: p._replace(prior=jnp.array([2.0, 1.0])), "index"),  # stale table
])
def test_validate_names_the_bad_leaf(change, name):
    cfg, params = _params()
    alg = bandits.gittins_policy(cfg)
    alg.validate(params, None)
    with pytest.raises(ValueError, match=rf"^{name} "):
        alg.validate(change(params), None)
    assert isinstance(alg.privacy_event(params), NoPrivacyEvent)


@pytest.mark.parametrize("call, name", [
    (lambda: _config(8, 1.0, 64), "max_discount"),
    (lambda: _config(-1, 0.9, 64), "max_count"),
    (lambda: _config(8, 0.9, 8), "num_prices"),
    (lambda: bandits.GittinsConfig(extra_depth=0), "extra_depth"),
    (lambda: _params(discount=0.96), "discount"),
    (lambda: _params(prior=(1.0, -1.0)), "prior"),
])
def test_bad_config_and_params_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


def _traced_regret_runner(params, cfg, steps=8):
    """One compiled run with the prior's first entry and arm 0's CTR traced, shared by every
    value below (a jit per value would compile the same scan seven times)."""
    alg = bandits.gittins_policy(cfg)

    @jax.jit
    def run(a0, c):
        p = params._replace(prior=params.prior.at[0].set(a0), ctr=params.ctr.at[0, 0].set(c))

        def body(state, t):
            return alg.step(p, state, None, jax.random.fold_in(jax.random.key(0), t))

        return jax.lax.scan(body, alg.init(p, jax.random.key(1)), jnp.arange(steps))[1]

    return lambda a0, c: np.asarray(run(jnp.float32(a0), jnp.float32(c)).regret)


def test_traced_invalid_prior_or_ctr_fails_closed():
    cfg, params = _params()
    run = _traced_regret_runner(params, cfg)
    a0, c = float(params.prior[0]), float(params.ctr[0, 0])  # the valid values

    assert np.all(np.isfinite(run(a0, c)))
    for bad in (0.0, -1.0, np.nan, np.inf):
        assert np.all(np.isnan(run(bad, c))), bad
    for bad in (1.5, np.nan):
        assert np.all(np.isnan(run(a0, bad))), bad


def test_depth_is_static_config():
    cfg = CFG  # its table compilation is shared with the module's other float32 tests
    assert cfg.depth == 6 + math.ceil(math.log(0.01) / math.log(0.95))
    assert _config(8, 0.9, 64).depth == 8 + math.ceil(math.log(0.01) / math.log(0.9))
    assert bandits.GittinsConfig(max_count=5, extra_depth=7).depth == 12
    assert isinstance(gittins_index_table(cfg, 0.5), IndexTable)


def test_gittins_grid_is_computed_once_per_environment_and_discount():
    """run_gittins at several horizons reuses one index table: the kept grid is the stacked
    ``gittins_params`` and is returned again for the same (environment, config, discount).
    (Moved here from test_experiments.py: CFG's table size shares this module's compilation.)"""
    from ldpjax_experiments import bandits_simulation as sim

    env = bandits.make_environment([0.3, 0.2])
    config = _config(6, 0.95, 128, bandits.PolicyConfig(1, 2))
    grid = sim._gittins_grid(env, config, 0.9)
    assert sim._gittins_grid(env, config, 0.9) is grid
    assert sim._gittins_grid(env, config, 0.8) is not grid
    other = sim._gittins_grid(bandits.make_environment([0.2, 0.3]), config, 0.9)
    assert not np.array_equal(np.asarray(other.ctr), np.asarray(grid.ctr))
    direct = sim.stack_params([bandits.gittins_params(env, config, 0.9)])
    for a, b in zip(jax.tree_util.tree_leaves(grid), jax.tree_util.tree_leaves(direct),
                    strict=True):  # the index table is NaN outside the reachable cells
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=a.dtype.kind == "f")
