"""The exact-law fast path (issue 10, item 2) against the sampling path.

For parametric clients the report of client k at iterate q is Bernoulli(r_k (1 - F_k(q)) +
(1 - r_k) / 2), drawn from one uniform with no data draw; the sampling path draws x ~ P_k and
randomizes 1{x > q}. They are equal in law, so the final estimate of a run has the same
distribution under both: two independent samples of runs (different keys) must agree in mean
and variance within their sampling error.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import ldpjax.quantile as Q
from ldpjax.engine import make_key, record, rollout, simulate

NUM_SEEDS = 1500
BUDGET = 120
CLIENTS = Q.make_clients(("normal", "laplace", "cauchy"), loc=[-0.5, 0.0, 1.0], scale=[1.0, 0.5, 1.0])
PARAMS = Q.quantile_params(0.3, [0.3, 0.6, 0.9], CLIENTS, weights=[0.5, 0.3, 0.2], lr_scale=5.0)

FACTORIES = {
    "local_sgd": lambda exact: (Q.local_sgd(Q.LocalSGDConfig(BUDGET, Q.C5, exact_law=exact)), BUDGET // 5),
    "dp_sgd": lambda exact: (Q.dp_sgd(Q.LocalSGDConfig(BUDGET, Q.C5, exact_law=exact)), BUDGET // 5),
    "divide_and_conquer": lambda exact: (Q.divide_and_conquer(Q.DivideAndConquerConfig(BUDGET, exact_law=exact)), BUDGET),
    "single": lambda exact: (Q.single(Q.SingleConfig(BUDGET, exact_law=exact)), BUDGET),
}
FINAL = record.last(lambda o: o.estimate)


def _two_sample_z(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """z statistics of the difference of means and of variances of two independent samples.

    Means: (mean_a - mean_b) / sqrt(s_a^2 / n_a + s_b^2 / n_b) (CLT). Variances: the sample
    variance has asymptotic variance (m4 - s^4) / n (m4 the fourth central moment; the delta
    method, valid for any finite fourth moment), so
    (s_a^2 - s_b^2) / sqrt((m4_a - s_a^4) / n_a + (m4_b - s_b^4) / n_b) is N(0, 1) in the limit.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    z_mean = (a.mean() - b.mean()) / math.sqrt(a.var() / a.size + b.var() / b.size)
    m4 = lambda x: np.mean((x - x.mean()) ** 4)
    se_var = math.sqrt((m4(a) - a.var() ** 2) / a.size + (m4(b) - b.var() ** 2) / b.size)
    return z_mean, (a.var() - b.var()) / se_var


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_exact_law_matches_sampling_in_mean_and_variance(name):
    # Two independent samples of NUM_SEEDS runs each (different keys). Under equality in law
    # each z is approximately N(0, 1); |z| <= 4 fails with probability 6e-5 per statistic.
    # Power: see the next test (a change of the report law by <= 0.02 gives |z| ~ 6.6).
    fast, steps = FACTORIES[name](True)
    slow, _ = FACTORIES[name](False)
    a = simulate(fast, PARAMS, make_key(101), steps, num_seeds=NUM_SEEDS, record=FINAL).record
    b = simulate(slow, PARAMS, make_key(202), steps, num_seeds=NUM_SEEDS, record=FINAL).record
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    z_mean, z_var = _two_sample_z(a, b)
    assert abs(z_mean) <= 4.0, (name, z_mean)
    assert abs(z_var) <= 4.0, (name, z_var)


def test_the_two_sample_statistic_detects_a_small_change_of_law():
    # Power of the statistic the test above relies on: moving every client's location by 0.05
    # changes each report probability by r_k f_k(q) 0.05 <= 0.02 near Q*; it must be flagged.
    fast, steps = FACTORIES["local_sgd"](True)
    slow, _ = FACTORIES["local_sgd"](False)
    a = simulate(fast, PARAMS, make_key(101), steps, num_seeds=NUM_SEEDS, record=FINAL).record
    biased_clients = Q.make_clients(("normal", "laplace", "cauchy"), loc=[-0.45, 0.05, 1.05], scale=[1.0, 0.5, 1.0])
    b = simulate(slow, PARAMS._replace(clients=biased_clients), make_key(202), steps, num_seeds=NUM_SEEDS, record=FINAL).record
    z_mean, _ = _two_sample_z(a, b)
    assert abs(z_mean) > 4.0


def test_one_step_report_probability_is_the_exact_law():
    # P(report = 1) at a fixed q: fast path vs r (1 - F(q)) + (1 - r)/2 from SciPy, over
    # n = 200000 reports per client: sd <= 0.5 / sqrt(n) = 0.0011, tolerance 5 sd.
    n = 200_000
    q = jnp.array([0.2, -0.3, 1.5])
    r = jnp.array([0.3, 0.6, 0.9])
    u = jax.random.bits(make_key(5), (n, 3), jnp.uint32)
    reports = Q.client_reports(CLIENTS, q, r, u)  # no data uniforms: the exact-law path
    F = np.array([
        stats.norm.cdf(0.2, loc=-0.5),
        stats.laplace.cdf(-0.3, loc=0.0, scale=0.5),
        stats.cauchy.cdf(1.5, loc=1.0),
    ])
    expected = np.asarray(r) * (1 - F) + (1 - np.asarray(r)) / 2
    np.testing.assert_allclose(np.asarray(reports).mean(axis=0), expected, atol=5 * 0.5 / math.sqrt(n))
    sampled = Q.client_reports(CLIENTS, q, r, u, jax.random.uniform(make_key(6), (n, 3)))
    np.testing.assert_allclose(np.asarray(sampled).mean(axis=0), expected, atol=5 * 0.5 / math.sqrt(n))


def test_client_cdf_is_the_diagonal_of_cdf():
    q = jnp.array([0.1, -0.2, 2.0])
    np.testing.assert_allclose(Q.client_cdf(CLIENTS, q), np.diag(np.asarray(Q.cdf(CLIENTS, q))), rtol=1e-6)
    owners = jnp.array([2, 0, 1, 2])
    points = jnp.array([0.0, 0.5, -1.0, 3.0])
    expected = [float(Q.cdf(CLIENTS, p)[k]) for p, k in zip(points, owners, strict=True)]
    np.testing.assert_allclose(Q.client_cdf(CLIENTS, points, client_index=owners), expected, rtol=1e-6)


def test_records_clients_always_take_the_sampling_path():
    # exact_law is ignored for records clients: both configs give the same numbers.
    # (20 reports from 5 and 3 records: reuse opted into, at most ceil(20 / 3) = 7 uses.)
    clients = Q.record_clients([np.arange(5.0), np.arange(3.0) + 0.5], max_uses=7)
    params = Q.quantile_params(0.5, 0.7, clients)
    runs = [
        rollout(Q.local_sgd(Q.LocalSGDConfig(20, Q.C1, exact_law=exact)), params, make_key(3), 20)[1].estimate
        for exact in (True, False)
    ]
    assert float(runs[0]) == float(runs[1])
    # while parametric clients do change path (different random numbers)
    params = PARAMS
    runs = [
        rollout(Q.local_sgd(Q.LocalSGDConfig(20, Q.C1, exact_law=exact)), params, make_key(3), 20)[1].estimate
        for exact in (True, False)
    ]
    assert float(runs[0]) != float(runs[1])
