"""Records clients read their records without replacement; reuse is opt-in and composes the claim.

Deterministic checks on the drawn indices and values (every record exactly once per pass), the
``ValueError`` of a too-long stream at every public boundary, and the m-fold composed claim,
whose epsilon is checked against an independent NumPy computation.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.accounting as acc
import ldpjax.quantile as Q
from ldpjax.engine import make_key, record, rollout, simulate
from ldpjax.quantile import record_stream as RS
from ldpjax.quantile.single import pooled_counts

# Distinct values in a scrambled input order (the stream must not depend on the order of values).
ROWS = [np.array([3.5, -1.0, 7.25, 0.0, 2.0, 11.0, -4.5]), np.array([10.0, 30.0, 20.0]),
        np.linspace(-2.0, 2.0, 12)[::-1]]
COUNTS = [r.size for r in ROWS]
RATES = np.array([0.3, 0.5, 0.8])


def _rr_eps(r):  # independent of ldpjax: log((1 + r) / (1 - r))
    return np.log((1.0 + np.asarray(r, np.float64)) / (1.0 - np.asarray(r, np.float64)))


@pytest.mark.parametrize("size", [1, 2, 3, 5, 14, 100, 1000, 2231])
def test_permutation_is_a_bijection(size):
    for salt in (0, 1, 0xDEADBEEF, 2**32 - 1):
        index = np.asarray(RS.permutation_index(salt, jnp.arange(size), size))
        np.testing.assert_array_equal(np.sort(index), np.arange(size))


def test_every_record_is_read_exactly_once_in_a_stream_of_its_length(x64):
    clients = Q.record_clients(ROWS)
    seed = RS.stream_seed(clients, make_key(0))
    width = max(COUNTS)
    positions = jnp.broadcast_to(jnp.arange(width)[:, None], (width, 3))
    values = np.asarray(jax.jit(lambda s: RS.stream_records(clients, s, positions))(seed))  # (width, K)
    index = np.asarray(jax.jit(lambda s: RS.record_index(s, jnp.arange(3), positions, jnp.asarray(COUNTS)))(seed))
    for k, row in enumerate(ROWS):
        n = row.size
        np.testing.assert_array_equal(np.sort(values[:n, k]), np.sort(row))  # each value exactly once
        np.testing.assert_array_equal(np.sort(index[:n, k]), np.arange(n))
        np.testing.assert_array_equal(values[:n, k], row[index[:n, k]])  # read by input position
        assert np.all(np.isnan(values[n:, k]))  # past max_uses * n_k = n_k: nothing (fail closed)


def test_reuse_reads_each_record_at_most_m_times_one_permutation_per_pass():
    clients = Q.record_clients([np.arange(5.0)], max_uses=3)
    seed = RS.stream_seed(clients, make_key(1))
    reports = 13  # m = ceil(13 / 5) = 3 passes, the last one partial
    values = np.asarray(jax.jit(lambda s: RS.stream_records(clients, s, jnp.arange(16), client_index=0))(seed))
    assert np.isnan(values[15])  # beyond max_uses * n = 15 the stream reads NaN (fail closed)
    values = values[:reports]
    assert np.bincount(values.astype(int), minlength=5).max() <= math.ceil(reports / 5)
    for p in range(2):  # each full pass is a permutation of the records
        np.testing.assert_array_equal(np.sort(values[5 * p : 5 * p + 5]), np.arange(5.0))
    passes = np.asarray(jax.jit(lambda s: RS.record_index(s, 0, jnp.arange(100).reshape(2, 50), 50))(seed))
    assert not np.array_equal(passes[0], passes[1])  # a new order each pass


def test_order_is_a_pure_function_of_the_key_and_jit_vmap_able():
    clients = Q.record_clients(ROWS)
    read = jax.jit(jax.vmap(lambda key: RS.stream_records(clients, RS.stream_seed(clients, key), jnp.arange(7)[:, None])))
    keys = jax.random.split(make_key(2), 4)
    a, b = np.asarray(read(keys)), np.asarray(read(keys))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 7, 3)
    assert not np.array_equal(a[0, :, 0], a[1, :, 0])  # different runs, different orders
    np.testing.assert_array_equal(np.isnan(a[:, :, 1]), np.broadcast_to(np.arange(7) >= 3, (4, 7)))  # 3 records
    # parametric clients carry a zero seed and draw nothing
    np.testing.assert_array_equal(RS.stream_seed(Q.make_clients("normal"), make_key(0)), [0, 0])


def test_first_record_is_uniform_over_runs():
    # 4000 runs of a 5-record client: the count of each first record is Binomial(4000, 1/5),
    # sd 25.3; 6 sd (two-sided, 5 cells: false-alarm probability < 1e-8) = 152.
    salts = jnp.arange(4000, dtype=jnp.uint32) * np.uint32(2654435761)
    seeds = jnp.stack([salts, salts ^ np.uint32(0x5BD1E995)], axis=-1)
    first = np.asarray(jax.vmap(lambda s: RS.record_index(s, 0, 0, 5))(seeds))
    assert np.all(np.abs(np.bincount(first, minlength=5) - 800) < 152)


ALGORITHMS = {
    "local_sgd": lambda budget: Q.local_sgd(Q.LocalSGDConfig(budget, Q.C1)),
    "dp_sgd": lambda budget: Q.dp_sgd(Q.LocalSGDConfig(budget, Q.C1)),
    "divide_and_conquer": lambda budget: Q.divide_and_conquer(Q.DivideAndConquerConfig(budget)),
    "single": lambda budget: Q.single(Q.SingleConfig(budget)),
}


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_stream_longer_than_the_records_raises(name):
    clients = Q.record_clients(ROWS)  # client 1 holds 3 records
    params = Q.quantile_params(0.5, RATES, clients, weights=[1 / 3, 1 / 3, 1 / 3])
    algorithm = ALGORITHMS[name](4)  # 4 reports per client (Single: 4 of 12 pooled each)
    message = r"records\[1\] \(client 1\) holds 3 records but the stream requests 4 reports"
    with pytest.raises(ValueError, match=message):
        algorithm.validate(params, None)
    with pytest.raises(ValueError, match=message):
        algorithm.privacy_event(params)
    with pytest.raises(ValueError, match=r"max_uses=2"):  # the hint names the reuse needed
        simulate(algorithm, params, make_key(0), 4, num_seeds=2)
    if name != "single":  # static budget: init raises as well (rollout, own jit)
        with pytest.raises(ValueError, match=message):
            rollout(algorithm, params, make_key(0), 4)
    # a stream of exactly n_k reports needs no reuse and claims the single-use event
    exact = ALGORITHMS[name](3)
    event = exact.privacy_event(params)
    assert not any(isinstance(e, acc.SelfComposedEvent) for e in event.events)


@pytest.mark.parametrize("name", ["local_sgd", "divide_and_conquer", "single"])
def test_reuse_claims_the_m_fold_composition(name, x64):
    clients = Q.record_clients(ROWS, max_uses=4)
    params = Q.quantile_params(0.5, RATES, clients, weights=[1 / 3, 1 / 3, 1 / 3])
    budget = 10
    algorithm = ALGORITHMS[name](budget)
    event = algorithm.privacy_event(params)
    # reports per client: t_T (Single: c_k of the K t_T pooled ones, 10 each for equal weights)
    uses = [math.ceil(budget / n) for n in COUNTS]  # [2, 4, 1]
    for part, m, r in zip(event.events, uses, RATES, strict=True):
        if m == 1:
            assert isinstance(part, acc.RandomizedResponseEvent)
        else:
            assert isinstance(part, acc.SelfComposedEvent) and int(part.count) == m
            assert float(part.event.r) == pytest.approx(r)
    expected = max(m * _rr_eps(r) for m, r in zip(uses, RATES, strict=True))
    assert float(acc.epsilon(event, 0.0)) == pytest.approx(expected, rel=1e-9)
    steps = budget
    final = simulate(algorithm, params, make_key(3), steps, num_seeds=4, record=record.last()).record
    assert np.all(np.isfinite(np.asarray(final.estimate)))


def test_dp_sgd_reuse_composes_gaussian_releases_exactly(x64):
    clients = Q.record_clients(ROWS, max_uses=4)
    params = Q.quantile_params(0.5, RATES, clients)
    event = Q.dp_sgd(Q.LocalSGDConfig(10, Q.C1), calibration="gaussian").privacy_event(params)
    uses = [math.ceil(10 / n) for n in COUNTS]
    mu = np.asarray(Q.dp_sgd_mu(RATES, 1e-5))
    for part, m in zip(event.events, uses, strict=True):
        count = int(part.count) if isinstance(part, acc.SelfComposedEvent) else 1
        inner = part.event if count > 1 else part
        assert count == m and isinstance(inner, acc.GaussianEvent)
    # m mu-GDP releases of the same record are (mu sqrt(m))-GDP exactly
    composed = acc.ParallelEvent(tuple(acc.GaussianEvent(u * np.sqrt(m)) for u, m in zip(mu, uses, strict=True)))
    assert float(acc.epsilon(event, 1e-5)) == pytest.approx(float(acc.epsilon(composed, 1e-5)), rel=1e-9)
    granular = Q.dp_sgd(Q.LocalSGDConfig(10, Q.C1), granularity=2.0**-5, calibration="gaussian").privacy_event(params)
    assert int(granular.events[1].count) == 4
    assert isinstance(granular.events[1].event, acc.DiscreteGaussianEvent)


def test_the_issue_setting_needs_reuse_and_then_claims_forty_uses():
    # One record, C5 with 40 samples: 40 reports of the same record.
    config = Q.LocalSGDConfig(40, Q.C5)
    once = Q.quantile_params(0.5, 0.5, Q.record_clients([[3.0]]))
    with pytest.raises(ValueError, match="holds 1 records but the stream requests 40 reports"):
        Q.local_sgd(config).validate(once, None)
    reused = Q.quantile_params(0.5, 0.5, Q.record_clients([[3.0]], max_uses=40))
    eps = float(acc.epsilon(Q.local_sgd(config).privacy_event(reused), 0.0))
    assert eps == pytest.approx(40 * math.log(3.0), rel=1e-5)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_run_past_the_claimed_stream_fails_closed(name):
    # t_T = 4 reports per client; a fifth step would read beyond the claimed stream.
    params = Q.quantile_params(0.5, 0.7, Q.record_clients([np.arange(4.0), np.arange(6.0)]))
    path = rollout(ALGORITHMS[name](4), params, make_key(0), 5, record=record.every_step(lambda o: o.estimate))[1]
    assert np.all(np.isfinite(np.asarray(path[:4]))) and np.isnan(float(path[4]))


def test_single_pooled_counts_are_a_fixed_apportionment():
    counts = np.asarray(pooled_counts(jnp.asarray([0.5, 0.3, 0.2]), 7))
    assert counts.tolist() == [4, 2, 1]  # shares 3.5, 2.1, 1.4: the largest remainder gets the 7th
    stacked = np.asarray(pooled_counts(jnp.asarray([[0.25] * 4, [0.7, 0.1, 0.1, 0.1]]), 8))
    assert stacked.tolist() == [[2, 2, 2, 2], [5, 1, 1, 1]]  # shares 5.6, 0.8, 0.8, 0.8
    # the claim of a stacked grid of weights covers the largest count of every client:
    # client 0 (4 records) reports 5 times at the second point, so its records are used twice
    clients = Q.record_clients([np.arange(4.0), np.arange(3.0), np.arange(3.0), np.arange(3.0)], max_uses=2)
    grid = Q.quantile_params(0.5, 0.6, clients)._replace(
        weights=jnp.asarray([[0.25] * 4, [0.7, 0.1, 0.1, 0.1]]), r=jnp.full((2, 4), 0.6))
    event = Q.single(Q.SingleConfig(2)).privacy_event(grid)
    assert [1 if isinstance(e, acc.RandomizedResponseEvent) else int(e.count) for e in event.events] == [2, 1, 1, 1]


def test_record_clients_validates_max_uses():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="max_uses must be an integer >= 1"):
            Q.record_clients([[1.0]], max_uses=bad)
    assert Q.record_clients([[1.0]]) != Q.record_clients([[1.0]], max_uses=2)  # a static setting
    # the stream order never depends on the values: same positions, same indices
    a, b = Q.record_clients([[1.0, 2.0, 3.0]]), Q.record_clients([[9.0, 2.0, 3.0]])
    seed = RS.stream_seed(a, make_key(5))
    xa = np.asarray(RS.stream_records(a, seed, jnp.arange(3), client_index=0))
    xb = np.asarray(RS.stream_records(b, seed, jnp.arange(3), client_index=0))
    assert np.sum(xa != xb) == 1  # replacing one record changes only the report that reads it
