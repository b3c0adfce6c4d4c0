"""Self-normalised inference: online V_T vs the batch formula, critical values, CIs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.quantile as Q
from ldpjax.engine import make_key


def _online(values, weights):
    def body(state, vw):
        return Q.inference_update(state, vw[0], vw[1]), None

    state, _ = jax.lax.scan(body, Q.inference_init((), values.dtype), jnp.stack([values, weights], 1))
    return state.mean, Q.inference_variance(state)


def _numpy_batch(values, weights):
    """Direct transcription of V_T = sum_m (r_m - r_{m-1}) {Q_T(r_m) - r_m Q_T(1)}^2."""
    values = np.asarray(values, np.float64)
    weights = np.asarray(weights, np.float64)
    total = weights.sum()
    partial_sums = np.cumsum(weights * values) / total  # Q_T(r_m)
    r = np.cumsum(weights) / total
    increments = np.diff(np.concatenate([[0.0], r]))
    return partial_sums[-1], np.sum(increments * (partial_sums - r * partial_sums[-1]) ** 2)


def _path(n, offset=3.0):
    key = make_key(7)
    noise = jax.random.normal(key, (n,))
    # an SGD-like path: slowly decaying drift plus noise around an offset
    values = offset + jnp.cumsum(noise) / jnp.arange(1, n + 1) + 0.3 / jnp.sqrt(jnp.arange(1, n + 1))
    weights = jax.random.randint(jax.random.fold_in(key, 1), (n,), 1, 6)
    return values, weights.astype(values.dtype)


def test_online_variance_equals_batch_formula_float64(x64):
    values, weights = _path(3000)
    est, var = _online(values, weights)
    ref_est, ref_var = _numpy_batch(values, weights)
    assert float(est) == pytest.approx(ref_est, rel=1e-12)
    assert float(var) == pytest.approx(ref_var, rel=1e-9)
    b_est, b_var = Q.batch_variance(values, weights)
    assert float(b_var) == pytest.approx(ref_var, rel=1e-10)
    assert float(b_est) == pytest.approx(ref_est, rel=1e-12)


def test_online_variance_is_accurate_in_float32():
    # The raw-sum form of Algorithm 2 loses all digits here (V ~ 1e-5 of each sum). The centred
    # recursion with a compensated running mean keeps the mean to ~1 ulp of 6.5 (4.8e-7;
    # tolerance 4 ulp) and V to a relative ~5e-5 (uncompensated float32 means gave 5e-3 here);
    # tolerance 5e-4, i.e. 2.5e-4 on the CI width.
    values, weights = _path(20000, offset=6.5)
    est, var = _online(values, weights)
    ref_est, ref_var = _numpy_batch(np.asarray(values), np.asarray(weights))
    assert float(est) == pytest.approx(ref_est, abs=2e-6)
    assert float(var) == pytest.approx(ref_var, rel=5e-4)


def test_zero_weight_leaves_the_state_unchanged():
    state = Q.inference_update(Q.inference_init(), 1.0, 2.0)
    again = Q.inference_update(state, 5.0, 0.0)
    for a, b in zip(state, again, strict=True):
        assert float(a) == float(b)
    assert float(Q.inference_variance(Q.inference_init())) == 0.0


def test_critical_value_table_and_interpolation():
    assert Q.critical_value(0.95) == 6.747
    assert Q.critical_value(0.80) == 3.875
    assert Q.critical_value(0.90) == 5.323
    assert Q.critical_value(0.99) == pytest.approx(10.0, abs=0.02)
    values = [Q.critical_value(lv) for lv in np.linspace(0.5, 0.999, 40)]
    assert np.all(np.diff(values) > 0)
    for bad in (0.3, 1.0, "0.95", True):
        with pytest.raises(ValueError, match="level"):
            Q.critical_value(bad)


def test_interpolated_values_match_the_cramer_von_mises_integral():
    # Independent reference: P(|pivot| <= c) = E_Z[1 - F(Z^2/c^2)], F the limiting Cramer-von
    # Mises CDF (SciPy), because int B^2 of the bridge B has that law and B is independent of W(1).
    hyp = pytest.importorskip("scipy.stats._hypotests")
    from scipy import integrate, optimize, stats

    def coverage(c):
        f = lambda z: stats.norm.pdf(z) * (1 - hyp._cdf_cvm_inf(np.array([z * z / (c * c)]))[0])
        return 2 * integrate.quad(f, 0, 40, limit=200)[0]

    for level in (0.80, 0.95, 0.975):
        ref = optimize.brentq(lambda c, level=level: coverage(c) - level, 1.0, 20.0, xtol=1e-6)
        assert Q.critical_value(level) == pytest.approx(ref, abs=2e-3)


def test_critical_values_mc_small_run_is_within_sampling_error():
    # 20000 paths: measured delta-method sd of c at 95% is 0.87/sqrt(1e7)*sqrt(1e7/2e4)=0.0195
    # (80%: 0.0107); 5 sd tolerance.
    out = Q.critical_values_mc(make_key(3), (0.80, 0.95), num_paths=20_000, num_steps=128)
    assert out[0] == pytest.approx(3.875, abs=5 * 0.0107)
    assert out[1] == pytest.approx(6.747, abs=5 * 0.0195)
    energies = Q.inference.bridge_energies(jax.random.split(make_key(4), 20000), 128)
    # E int B^2 = (1 - 1/n^2)/6; sd of the energy is sqrt(1/45) = 0.149 -> sd of mean 0.00105
    assert float(jnp.mean(energies)) == pytest.approx((1 - 1 / 128**2) / 6, abs=5 * 0.00105)


@pytest.mark.slow
def test_critical_values_mc_agree_with_table_to_two_decimals():
    # 6e6 paths: sd of c = 0.48, 0.67, 0.87, 1.46 (x 1e-3) * sqrt(1e7 / 6e6) = 0.0006 ... 0.0019
    # at 80/90/95/99%; |MC - table| < 0.005 is 2.6 sd at 99% and >= 4 sd elsewhere.
    out = Q.critical_values_mc(make_key(5), (0.80, 0.90, 0.95, 0.99), num_paths=6_000_000, num_steps=256)
    table = [Q.CRITICAL_VALUES[lv] for lv in (0.80, 0.90, 0.95, 0.99)]
    np.testing.assert_allclose(out, table, atol=0.005)


def test_confidence_interval():
    lo, hi = Q.confidence_interval(1.0, 0.04, 0.95)
    assert float(lo) == pytest.approx(1.0 - 6.747 * 0.2)
    assert float(hi) == pytest.approx(1.0 + 6.747 * 0.2)
    with pytest.raises(ValueError, match="variance"):
        Q.confidence_interval(1.0, -1.0)
