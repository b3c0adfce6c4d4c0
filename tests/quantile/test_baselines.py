"""Baselines: DP-SGD calibration and update, DC (divide and conquer), Single (pooled stream)."""

from __future__ import annotations

import math

import dp_accounting
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special

import ldpjax.quantile as Q
from ldpjax.accounting import rr_epsilon
from ldpjax.engine import make_key, record, rollout, simulate

AUTHORS_LOCATIONS = [0.4967, -0.1383, 0.6477, 1.5230, -0.2342, -0.2341, 1.5792, 0.7674, -0.4695, 0.5426]


def test_gaussian_calibration_meets_eps_at_delta(x64):
    # Independent check with Google's dp-accounting: the Gaussian mechanism with noise sd
    # sigma_k (sensitivity 1) is (eps_k, 1e-5)-DP with eps_k = rr_epsilon(r_k).
    r = np.array([0.25, 0.5, 0.9, 0.99])
    sigma = np.asarray(Q.gaussian_noise_scales(r, 1e-5))
    for rk, sk in zip(r, sigma, strict=True):
        eps = dp_accounting.get_epsilon_gaussian(sk, 1e-5, tol=1e-12)
        assert eps == pytest.approx(float(rr_epsilon(rk)), rel=1e-6)
    assert float(Q.gaussian_noise_scales(np.array([1.0]), 1e-5)[0]) == 0.0


@pytest.mark.parametrize("calibration", ["laplace", "gaussian"])
@pytest.mark.parametrize("exact_law", [False, True])
def test_dp_sgd_round_matches_numpy_transcription(exact_law, calibration):
    # Key schedule written out here: round key -> (data, privacy); one data uniform per client
    # and local step; one privacy key per local step, whose standard noise draws (one per
    # client) scale by 1 / eps_k (Laplace, eps_k = log((1 + r)/(1 - r))) or sigma_k = 1 / mu_k
    # (Gaussian), sensitivity 1. exact_law: 1{x <= q} = 1{u < F(q)}.
    clients = Q.make_clients("normal", loc=[0.0, 1.0])
    r = np.array([0.4, 0.8])
    params = Q.quantile_params(0.7, r, clients, init=0.5)
    config = Q.LocalSGDConfig(10, Q.C5, exact_law=exact_law)
    algorithm = Q.dp_sgd(config, calibration=calibration)
    state = algorithm.init(params, make_key(0))
    if calibration == "laplace":
        scale = 1.0 / np.log((1 + r) / (1 - r))
        draw = jax.random.laplace
    else:
        scale = np.asarray(Q.gaussian_noise_scales(r, 1e-5), np.float64)
        draw = jax.random.normal
    np.testing.assert_allclose(1.0 / np.asarray(state.mu), scale, rtol=1e-5)
    key = make_key(3)
    state, out = algorithm.step(params, state, None, key)
    data_key, privacy_key = jax.random.split(key)
    draws = np.asarray(jax.random.uniform(data_key, (5, 2)), np.float64)
    noise_keys = jax.random.split(privacy_key, 5)
    noise = np.stack([np.asarray(draw(noise_keys[j], (2,)), np.float64) for j in range(5)])
    lr = 20.0 / (1.0 + 100.0) / 5
    loc = np.array([0.0, 1.0])
    q = np.full(2, 0.5)
    for j in range(5):
        if exact_law:
            below = draws[j] < special.ndtr(q - loc)
        else:
            x = loc + math.sqrt(2) * special.erfinv(2 * np.maximum(draws[j], 2.0**-24) - 1)
            below = x <= q
        q = q - lr * (below - 0.7 + scale * noise[j])
    assert float(out.iterate) == pytest.approx(q.mean(), abs=1e-5)


def test_dp_sgd_laplace_claim_is_pure_eps_per_client():
    # the default claim: eps_k = log((1 + r_k)/(1 - r_k)) pure LDP, the worst client counts

    import ldpjax.accounting as acc
    r = np.array([0.25, 0.6, 0.9])
    params = Q.quantile_params(0.5, r, Q.make_clients("normal", loc=[0.0, 0.0, 0.0]))
    event = Q.dp_sgd(Q.LocalSGDConfig(10, Q.C1)).privacy_event(params)
    assert float(acc.epsilon(event, 0.0)) == pytest.approx(math.log(1.9 / 0.1), rel=1e-5)
    with pytest.raises(ValueError, match="calibration"):
        Q.dp_sgd(Q.LocalSGDConfig(10, Q.C1), calibration="exponential")


def test_dc_with_one_client_is_single_machine_c1():
    # DC without communication and C1 Local SGD coincide when K = 1 (same draws, same update).
    clients = Q.make_clients("laplace", loc=[0.3])
    params = Q.quantile_params(0.6, 0.7, clients)
    dc_cfg = Q.DivideAndConquerConfig(300)
    c1_cfg = Q.LocalSGDConfig(300, Q.C1)
    _, dc = rollout(Q.divide_and_conquer(dc_cfg), params, make_key(8), dc_cfg.num_rounds)
    _, c1 = rollout(Q.local_sgd(c1_cfg), params, make_key(8), c1_cfg.num_rounds)
    assert float(dc.estimate) == pytest.approx(float(c1.estimate), abs=1e-6)
    assert float(dc.variance) == pytest.approx(float(c1.variance), rel=1e-4)


def test_dc_averages_estimates_and_variance_statistics():
    clients = Q.make_clients("normal", loc=[-1.0, 0.0, 2.0])
    weights = np.array([0.2, 0.3, 0.5])
    params = Q.quantile_params(0.5, [0.5, 0.7, 0.9], clients, weights)
    config = Q.DivideAndConquerConfig(400)
    state, rec = rollout(Q.divide_and_conquer(config), params, make_key(1), config.num_rounds)
    per_client_v = np.asarray(Q.inference_variance(state.stats))
    assert float(rec.estimate) == pytest.approx(float(weights @ np.asarray(state.stats.mean)), rel=1e-6)
    assert float(rec.variance) == pytest.approx(float(weights @ per_client_v), rel=1e-6)


@pytest.fixture(scope="module")
def hete_runs():
    # Hete-L: K = 10 normal clients at the authors' locations, tau = 0.8, r = 0.9, t_T = 2000,
    # 64 replications per method.
    clients = Q.make_clients("normal", loc=AUTHORS_LOCATIONS)
    params = Q.quantile_params(0.8, 0.9, clients)
    runs = {}
    final = record.last()
    for name, algorithm, steps in [
        ("C1", Q.local_sgd(Q.LocalSGDConfig(2000, Q.C1)), 2000),
        ("DP-SGD", Q.dp_sgd(Q.LocalSGDConfig(2000, Q.C1)), 2000),
        ("DC", Q.divide_and_conquer(Q.DivideAndConquerConfig(2000)), 2000),
        ("Single", Q.single(Q.SingleConfig(2000)), 2000),
    ]:
        runs[name] = simulate(algorithm, params, make_key(6), steps, num_seeds=64, record=final).record
    q_star = float(Q.global_quantile(0.8, clients))
    local_mean = float(np.mean(Q.local_quantiles(0.8, clients)))
    sigma = math.sqrt(float(Q.clients_asymptotic_variance(0.8, 0.9, clients)) / 2000)
    return runs, q_star, local_mean, sigma


def test_federated_methods_target_q_star_and_dc_does_not(hete_runs):
    runs, q_star, local_mean, sigma = hete_runs
    # sd of a 64-replication mean ~ sigma_method / 8; allow 5 sd using a generous sigma bound
    # (DP-SGD noise is larger: its RMSE is measured and used), plus the finite-t_T transient
    # of SGD started at q_0 = 0 (Q* = 1.48): measured for C1 at t_T = 2000 over 4 x 256 runs
    # (both report paths) as -0.0115 +- 0.0006, i.e. 0.85 sigma; allowance 1.0 sigma.
    for name in ("C1", "DP-SGD", "Single"):
        est = runs[name].estimate
        spread = max(sigma, est.std())
        assert abs(est.mean() - q_star) <= 5 * spread / 8 + 1.0 * sigma, name
    dc = runs["DC"].estimate
    # DC targets the average of the local quantiles (here 0.19 below Q*), up to the small
    # finite-t_T bias of single-machine SGD (measured ~0.02): it must sit far closer to it.
    gap = abs(local_mean - q_star)
    assert gap > 0.1
    assert abs(dc.mean() - local_mean) < 0.25 * gap < abs(dc.mean() - q_star)
    # DC's CIs miss Q* (coverage collapse) while C1 covers it
    cover = lambda rec: np.mean(np.abs(rec.estimate - q_star) <= 6.747 * np.sqrt(rec.variance))
    assert cover(runs["DC"]) < 0.5
    assert cover(runs["C1"]) > 0.8


def test_single_counts_pooled_records(hete_runs):
    runs, *_ = hete_runs
    assert np.all(runs["Single"].samples == 2000 * 10)
    assert np.all(runs["C1"].samples == 2000)


@pytest.mark.parametrize("exact_law", [False, True])
def test_single_block_matches_numpy_transcription(exact_law):
    # Key schedule written out here: block key -> (data, privacy); data row 0 = owners,
    # row 1 = values (sampling path only); one 32-bit report word per record.
    clients = Q.make_clients(("normal", "cauchy"), loc=[0.0, 3.0])
    weights = np.array([0.3, 0.7])
    r = np.array([0.5, 0.9])
    params = Q.quantile_params(0.4, r, clients, weights, init=1.0)
    algorithm = Q.single(Q.SingleConfig(5, exact_law=exact_law))
    state = algorithm.init(params, make_key(0))
    key = make_key(9)
    state, out = algorithm.step(params, state, None, key)
    data_key, privacy_key = jax.random.split(key)
    u = np.asarray(jax.random.uniform(data_key, (1 if exact_law else 2, 2)), np.float64)
    report_u = np.asarray(jax.random.bits(privacy_key, (2,), jnp.uint32), np.float64)
    owner = np.minimum(np.searchsorted(np.cumsum(weights), u[0] * weights.sum(), side="right"), 1)
    cdf = (lambda q: special.ndtr(q), lambda q: 0.5 + math.atan(q - 3.0) / math.pi)
    q = 1.0
    path = []
    for j in range(2):
        k = owner[j]
        if exact_law:
            report = report_u[j] < np.ceil((r[k] * (1 - cdf[k](q)) + (1 - r[k]) / 2) * 2.0**32)
        else:
            uj = max(u[1, j], 2.0**-24)
            x = math.sqrt(2) * special.erfinv(2 * uj - 1) if k == 0 else 3.0 + math.tan(math.pi * (uj - 0.5))
            flip = report_u[j] < np.ceil((1 - np.float64(np.float32(r[k]))) / 2 * 2.0**32)
            report = (x > q) ^ flip
        inc = (1 - r[k] + 0.8 * r[k]) / (2 * r[k]) if report else -(1 + r[k] - 0.8 * r[k]) / (2 * r[k])
        q += 20.0 / (1.0 + 100.0) / 2 * inc  # block 1, lr_1 split over K = 2 records
        path.append(q)
    assert float(out.iterate) == pytest.approx(q, abs=1e-5)
    assert float(out.estimate) == pytest.approx(np.mean(path), abs=1e-5)
    assert int(out.samples) == 2


def test_baseline_configs_validate():
    with pytest.raises(ValueError, match="budget"):
        Q.DivideAndConquerConfig(0)
    with pytest.raises(ValueError, match="budget"):
        Q.SingleConfig(-3)
    with pytest.raises(ValueError, match="LocalSGDConfig"):
        Q.dp_sgd(Q.SingleConfig(3))
