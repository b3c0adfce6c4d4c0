"""No finite budget becomes "no noise", and extreme valid budgets give a value or a clear error.

Each bound is recomputed here from NumPy's float model (``np.spacing``, ``np.finfo``) or exact
integers, never read from the code under test. Every test runs in the default precision and,
with ``JAX_ENABLE_X64=1``, in float64: the expectations follow the release dtype.
"""

from __future__ import annotations

import importlib
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import mechanisms as M

KEY = jax.random.key(5)
L = importlib.import_module("ldpjax.mechanisms.laplace")
DG = importlib.import_module("ldpjax.mechanisms.discrete_gaussian")
RR = importlib.import_module("ldpjax.mechanisms.randomized_response")
G = importlib.import_module("ldpjax.mechanisms.gaussian")
FLOAT = {"gaussian": M.gaussian_mechanism, "laplace": M.laplace_mechanism}


def _dtype():
    return np.dtype(jnp.result_type(float))  # float32, or float64 under JAX_ENABLE_X64


def _largest_budget(value, sensitivity):
    """sensitivity / spacing(max |value| + sensitivity) in the release dtype (NumPy's spacing)."""
    dtype = _dtype()
    top = dtype.type(np.max(np.abs(value)) + sensitivity)
    return sensitivity / float(np.spacing(top))


# Cost (fast suite): one jitted release per mechanism for every traced case.
_TRACED = {name: jax.jit(lambda k, x, b, f=f: f(k, x, 1.0, b)) for name, f in FLOAT.items()}


@pytest.mark.parametrize("name", sorted(FLOAT))
@pytest.mark.parametrize("extent", [0.5, 1e6])
def test_float_budget_beyond_the_resolution_is_refused(name, extent):
    value = np.array([0.0, extent])
    largest = _largest_budget(value, 1.0)
    with pytest.raises(ValueError, match=rf"{'mu' if name == 'gaussian' else 'eps'}=.*largest"):
        FLOAT[name](KEY, value, 1.0, 1.01 * largest)
    ok = np.asarray(FLOAT[name](KEY, value, 1.0, 0.99 * largest))
    assert np.all(np.isfinite(ok))
    bad = np.asarray(_TRACED[name](KEY, jnp.asarray(value), 1.01 * largest))
    assert np.all(np.isnan(bad))  # traced: NaN, never value + 0
    assert np.all(np.isfinite(np.asarray(_TRACED[name](KEY, jnp.asarray(value), 0.99 * largest))))


@pytest.mark.parametrize("name", sorted(FLOAT))
def test_a_budget_beyond_the_dtype_never_means_no_noise(name):
    # 1e39 overflows float32 (it was read as inf: no noise); in float64 its noise sd 1e-39 is
    # below the spacing 1.1e-16 of the data: refused in both
    with pytest.raises(ValueError, match="largest"):
        FLOAT[name](KEY, jnp.array([0.3, 0.7]), 1.0, 1e39)
    # traced, at a budget whose scale underflows to 0 in float32 (and is below the float64
    # spacing): NaN
    assert np.all(np.isnan(np.asarray(_TRACED[name](KEY, jnp.array([0.3, 0.7]), 3e38))))


def test_noise_scale_refuses_an_underflowing_budget():
    with pytest.raises(ValueError, match="mu=.*largest"):
        M.gaussian_noise_scale(1.0, 1e39)
    assert np.isnan(float(jax.jit(M.gaussian_noise_scale)(1.0, 3e38)))
    assert float(M.gaussian_noise_scale(1.0, jnp.inf)) == 0.0  # explicit no noise stays


@pytest.mark.parametrize("mu", [1e-40, 1e-300])
def test_tiny_budgets_give_a_release_not_nan(mu):
    dtype = _dtype()
    tiny = float(np.finfo(dtype).tiny)
    expected = 1.0 / max(mu, tiny)  # raised to the smallest normal number where below it
    assert float(M.gaussian_noise_scale(1.0, mu)) == pytest.approx(expected, rel=1e-6)
    assert float(M.laplace_noise_scale(1.0, mu)) == pytest.approx(expected, rel=1e-6)
    out = np.asarray(M.gaussian_mechanism(KEY, jnp.zeros(4), 1.0, mu))
    assert not np.any(np.isnan(out))


def test_sensitivity_beyond_the_dtype_is_refused_or_honoured():
    dtype = _dtype()
    big = float(np.finfo(dtype).max)
    for sensitivity in (1e39, 1e308):
        if sensitivity > big:
            with pytest.raises(ValueError, match="sensitivity=.*float32 cannot hold"):
                M.gaussian_mechanism(KEY, jnp.zeros(2), sensitivity, 1.0)
            with pytest.raises(ValueError, match="sensitivity"):
                M.laplace_mechanism(KEY, jnp.zeros(2), sensitivity, 1.0)
        else:
            assert float(M.gaussian_noise_scale(sensitivity, 1.0)) == pytest.approx(sensitivity)
    if big > 1e300:  # float64: sensitivity 1e308 at mu = 1e-300 overflows the scale
        with pytest.raises(ValueError, match="mu=.*smallest mu"):
            M.gaussian_mechanism(KEY, jnp.zeros(2), 1e308, 1e-300)


def test_granular_gaussian_budget_that_underflows_is_nan():
    release = jax.jit(lambda m: M.gaussian_mechanism(KEY, jnp.zeros(2), 1.0, m, granularity=2**-4))
    assert np.all(np.isnan(np.asarray(release(3e38))))
    with pytest.raises(ValueError, match="mu"):
        M.gaussian_mechanism(KEY, jnp.zeros(2), 1.0, 1e39, granularity=2**-4)


def test_discrete_gaussian_refuses_scales_where_its_arithmetic_underflows():
    with pytest.raises(ValueError, match="sigma"):
        DG.discrete_gaussian(KEY, 1e-20, (3,))
    traced = jax.jit(lambda s: DG.discrete_gaussian(KEY, s, (3,)))
    assert np.all(np.asarray(traced(1e-20)) == DG.DG_INVALID)
    assert np.all(np.asarray(traced(2.0**-62)) == DG.DG_INVALID)  # below the documented bound
    assert np.all(np.asarray(traced(2.0**-60)) == 0)  # the law of s = 2^-60: Y = 0
    with pytest.raises(ValueError, match="2\\^-60.*largest mu"):
        G.check_grid_sigma(1e-19, 1.0, 2**-4)


def test_granular_laplace_scale_is_never_zero_for_a_finite_eps():
    # D / eps = 2 / (largest float) underflows to 0; the scale is still the smallest grid
    # scale 1/64
    big = float(np.finfo(_dtype()).max)
    shift, scale = jax.jit(lambda e: L.granular_laplace_scale(1.0, e, 1.0, 1))(big)
    assert float(shift) == 2.0 and float(scale) == 1.0 / 64
    assert float(jax.jit(lambda e: L.granular_laplace_scale(1.0, e, 1.0, 1)[1])(jnp.inf)) == 0.0


def test_rate_that_rounds_to_one_is_refused():
    dtype = _dtype()
    r = 1 - 2.0**-26
    if dtype == np.float32:  # 1 - 2^-26 is 1.0 in float32: it would never flip
        for call in (
            lambda: M.randomized_response(KEY, jnp.zeros(3, jnp.int32), r),
            lambda: RR.flip_threshold(r),
            lambda: M.randomized_response_bernoulli(KEY, jnp.full(3, 0.5), r),
            lambda: M.randomized_response_from_bits(jnp.zeros(3, jnp.uint32), 0, r),
        ):
            with pytest.raises(ValueError, match=r"r=.*rounds to 1.*1 - 2\^-24"):
                call()
    else:  # float64 holds it: F = 2^31 - floor(r 2^31) = 32 exactly
        assert int(RR.flip_threshold(r)) == 32


def test_every_rate_below_one_flips():
    dtype = _dtype()
    r = np.nextafter(dtype.type(1), dtype.type(0))  # the largest r < 1 of the dtype
    expected = -((-(1 - Fraction(float(r))) / 2 * 2**32).__floor__())  # ceil, exactly
    assert expected >= 1
    assert int(RR.flip_threshold(r)) == expected
    assert int(jax.jit(RR.flip_threshold)(r)) == expected


def test_bernoulli_report_never_becomes_certain():
    # r = 1 - 2^-24 and P[bit = 1] = 1: the report is 1 with probability 1 - 2^-25, i.e. on
    # ceil((1 - 2^-25) 2^32) = 2^32 - 128 words; r p + (1 - r)/2 rounds to 1 in float32
    r = 1 - 2.0**-24
    words = jnp.array([2**32 - 129, 2**32 - 128, 2**32 - 1], jnp.uint32)
    out = M.randomized_response_bernoulli_from_bits(words, jnp.ones(3), r)
    assert out.tolist() == [True, False, False]


@pytest.mark.parametrize("granularity", [2.0**-4])
@pytest.mark.parametrize("name", sorted(FLOAT))
@pytest.mark.parametrize("budget", [-1.0, 0.0, float("nan")])
def test_granular_gradient_is_nan_at_an_invalid_budget(name, granularity, budget):
    def total(b, s):
        return jnp.sum(FLOAT[name](KEY, jnp.array([0.25, 0.5]), s, b, granularity=granularity))

    d_budget, d_sens = jax.grad(total, argnums=(0, 1))(budget, 1.0)
    assert np.isnan(float(d_budget)) and np.isnan(float(d_sens))
    d_budget, d_sens = jax.grad(total, argnums=(0, 1))(1.0, 1.0)  # valid: finite (0, a grid)
    assert float(d_budget) == 0.0 and float(d_sens) == 0.0


def test_low_precision_inputs_to_simulate_are_a_value_error():
    import ldpjax.experts as ex
    from ldpjax.engine import make_key, simulate

    gains = jnp.full((4, 3), 0.5, jnp.bfloat16)
    with pytest.raises(ValueError, match="inputs has dtype bfloat16"):
        simulate(
            ex.rw_ftpl(ex.FTPLConfig(3)),
            ex.ftpl_params(1.0),
            make_key(0),
            inputs=gains,
            num_seeds=1,
        )


# --------------------------------------------------------------------------- params builders
def test_builders_refuse_finite_budgets_that_become_no_noise():
    """A finite budget must not turn into the "no noise" value when it enters JAX's default
    float type: mu = 1e39 is inf in float32, and r = 1 - 2^-26 is 1.0 there."""
    from ldpjax import bandits, demo, experts
    from ldpjax import quantile as Q

    if jax.config.jax_enable_x64:  # float64 holds both: the builders keep them finite
        assert float(experts.ftpl_params(1e39).mu) == 1e39
        return
    env = bandits.make_environment([0.3, 0.2])
    cases = [
        lambda: experts.ftpl_params(1e39),
        lambda: demo.counter_params(1e39),
        lambda: bandits.epsilon_greedy_params(env, "constant", 1e39),
    ]
    for make in cases:
        with pytest.raises(ValueError, match="cannot hold"):
            make()
    with pytest.raises(ValueError, match="rounds to 1"):
        Q.quantile_params(0.5, 1 - 2**-26, Q.make_clients("normal", loc=[0.0, 1.0]))
    # an explicit inf is still "no noise", written on purpose
    assert float(experts.ftpl_params(float("inf")).mu) == float("inf")
