"""Release safety, class by class: every way a release could weaken its claim fails closed.

Table-driven over the classes of a hostile review of the privacy layer:

* traced degenerate values (sensitivity 0, an unchecked traced inf budget) give NaN;
* low precision (float16 / bfloat16 anywhere in a release) raises ``ValueError``;
* every sampler loop is bounded (out of rounds: NaN, never a hang);
* out-of-domain traced categories and counts give an invalid release (-1 / NaN);
* decisions on 32-bit words: thresholds equal an independent exact rational computation;
* keys for real data come from the OS CSPRNG (128 bits).

Expected values come from closed forms computed here with Python's exact ``fractions``, never
from the code under test.
"""

from __future__ import annotations

import importlib
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import accounting as acc
from ldpjax import mechanisms as M
from ldpjax.mechanisms import kary

dg = importlib.import_module("ldpjax.mechanisms.discrete_gaussian")
rr = importlib.import_module("ldpjax.mechanisms.randomized_response")

KEY = jax.random.key(7)
X3 = jnp.array([0.25, 0.5, 0.75])


def _gauss(mu, sens=1.0, g=None):
    return M.gaussian_mechanism(KEY, X3, sens, mu, domain=(0.0, 1.0), granularity=g)


# --------------------------------------------------------------------------- traced degenerate
TRACED_NAN_CASES = {
    "float mu overflows to inf": lambda: jax.jit(lambda a: _gauss(jnp.exp(a)))(1000.0),
    "granular mu overflows to inf": lambda: jax.jit(lambda a: _gauss(jnp.exp(a), g=2**-6))(1000.0),
    "float sensitivity 0": lambda: jax.jit(lambda s: _gauss(1.0, s))(0.0),
    "granular sensitivity 0": lambda: jax.jit(lambda s: _gauss(1.0, s, 2**-6))(0.0),
    "float sensitivity nan": lambda: jax.jit(lambda s: _gauss(1.0, s))(jnp.nan),
    "granular mu -1": lambda: jax.jit(lambda m: _gauss(m, g=2**-6))(-1.0),
    "granular mu nan": lambda: jax.jit(lambda m: _gauss(m, g=2**-6))(jnp.nan),
    "granular value outside domain": lambda: jax.jit(
        lambda x: M.gaussian_mechanism(KEY, x, 1.0, 1.0, domain=(0.0, 1.0), granularity=2**-6)
    )(jnp.array([0.5, 1.5])),
    "granular grid too fine": lambda: jax.jit(lambda m: _gauss(m, g=2**-20))(1e-3),
    "noise scale sensitivity 0": lambda: jax.jit(M.gaussian_noise_scale)(0.0, 1.0),
    "noise scale traced inf": lambda: jax.jit(M.gaussian_noise_scale)(1.0, jnp.inf),
}


@pytest.mark.parametrize("name", sorted(TRACED_NAN_CASES))
def test_traced_degenerate_values_give_nan(name):
    out = np.asarray(TRACED_NAN_CASES[name]())
    assert np.all(np.isnan(out)), out


@pytest.mark.parametrize("bad", [-1.0, 0.0, float("nan")])
def test_gradient_at_an_invalid_budget_is_nan(bad):
    # a zero gradient would let an optimiser walk through an invalid budget
    float_release = lambda mu: jnp.sum(M.gaussian_mechanism(KEY, X3, 1.0, mu))
    laplace_release = lambda eps: jnp.sum(M.laplace_mechanism(KEY, X3, 1.0, eps))
    debias = lambda r: M.debias_randomized_response(1.0, r)
    for fn in (float_release, laplace_release, debias):
        assert np.isnan(float(jax.grad(fn)(bad)))
        assert np.isfinite(float(jax.grad(fn)(0.5)))


def test_concrete_zero_sensitivity_raises():
    with pytest.raises(ValueError, match="sensitivity"):
        _gauss(1.0, 0.0)


def test_experts_traced_zero_sensitivity_gives_nan():
    from ldpjax import experts

    gains = jnp.array([0.2, 0.9])
    out = jax.jit(lambda s: experts.privatize_gains(KEY, gains, 1.0, s))(0.0)
    assert np.all(np.isnan(np.asarray(out)))


def test_inf_is_honoured_only_when_concrete_or_permitted():
    release = jax.jit(lambda mu: _gauss(mu))
    assert np.all(np.isnan(np.asarray(release(jnp.inf))))
    np.testing.assert_array_equal(np.asarray(_gauss(jnp.inf)), np.asarray(X3))  # written inf
    with M.no_privacy_permitted():
        np.testing.assert_array_equal(np.asarray(release(jnp.inf)), np.asarray(X3))
    # leaving the permit: the program compiled inside it is not reused
    assert np.all(np.isnan(np.asarray(release(jnp.inf))))


def test_simulate_honours_a_checked_inf_grid_point():
    from ldpjax import experts
    from ldpjax.engine import make_key, rollout, simulate

    alg = experts.rw_ftpl(experts.FTPLConfig(3))
    gains = jnp.tile(jnp.array([0.2, 0.5, 0.9]), (6, 1))
    out = simulate(
        alg,
        experts.ftpl_params(jnp.array([jnp.inf, 1.0])),
        make_key(0),
        inputs=gains,
        grid_ndim=1,
        num_seeds=2,
    )
    assert np.all(np.isfinite(np.asarray(out.record.gain)))
    # the same rollout under the user's own jit (a traced inf): NaN state, not a clean one
    traced = jax.jit(lambda mu: rollout(alg, experts.FTPLParams(mu), make_key(0), inputs=gains)[0])
    assert np.all(np.isnan(np.asarray(traced(jnp.exp(jnp.asarray(1000.0))).noisy_total)))


# --------------------------------------------------------------------------- low precision
LOW = [jnp.float16, jnp.bfloat16]
PRECISION_CASES = {
    "value": lambda d: M.gaussian_mechanism(KEY, X3.astype(d), 1.0, 1.0, granularity=2**-6),
    "mu": lambda d: M.gaussian_mechanism(KEY, X3, 1.0, jnp.asarray(1.0, d), granularity=2**-6),
    "sensitivity": lambda d: M.gaussian_mechanism(KEY, X3, jnp.asarray(1.0, d), 1.0),
    "sigma": lambda d: M.discrete_gaussian(KEY, jnp.asarray(3.0, d), (4,)),
    "r": lambda d: M.randomized_response(KEY, jnp.array([0, 1]), jnp.asarray(0.5, d)),
    "explore_prob": lambda d: M.kary_randomized_response_explore(
        KEY, jnp.array([0, 1]), jnp.asarray(0.5, d), 3
    ),
    "traced mu": lambda d: jax.jit(lambda m: M.gaussian_mechanism(KEY, X3, 1.0, m))(
        jnp.asarray(1.0, d)
    ),
}


@pytest.mark.parametrize("dtype", LOW, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(PRECISION_CASES))
def test_low_precision_is_refused(name, dtype):
    with pytest.raises(ValueError, match="float16|bfloat16"):
        PRECISION_CASES[name](dtype)


@pytest.mark.parametrize("dtype", LOW, ids=["float16", "bfloat16"])
def test_low_precision_params_are_refused_by_the_engine(dtype):
    from ldpjax import experts
    from ldpjax.engine import make_key, simulate

    alg = experts.rw_ftpl(experts.FTPLConfig(2))
    params = experts.FTPLParams(jnp.asarray(1.0, dtype))
    with pytest.raises(ValueError, match="params.mu has dtype"):
        simulate(alg, params, make_key(0), inputs=jnp.full((3, 2), 0.5))


# --------------------------------------------------------------------------- bounded loops
def test_discrete_gaussian_out_of_rounds_fails_closed(monkeypatch):
    monkeypatch.setattr(dg, "MAX_ROUNDS", 0)  # read at trace time: no round may run
    y = dg.discrete_gaussian(KEY, 3.0, (5,))
    assert np.all(np.asarray(y) == dg.DG_INVALID)
    out = M.gaussian_mechanism(KEY, X3, 1.0, 1.0, granularity=2**-6)
    assert np.all(np.isnan(np.asarray(out)))


def test_discrete_gaussian_invalid_sigma_is_the_sentinel_not_zero():
    y = jax.jit(lambda s: dg.discrete_gaussian(KEY, s, (4,)))(jnp.nan)
    assert np.all(np.asarray(y) == dg.DG_INVALID)
    y = jax.jit(lambda s: dg.discrete_gaussian(KEY, s, (4,)))(-1.0)
    assert np.all(np.asarray(y) == dg.DG_INVALID)


# --------------------------------------------------------------------------- out of domain
def _krr(category, p=0.5, k=3):
    words = M.report_bits(KEY, (len(category), 2))
    return jax.jit(lambda c: M.kary_randomized_response_from_bits(words, c, p, k)[0])(
        jnp.asarray(category)
    )


CATEGORY_CASES = {
    "fractional": [1.5, 0.5],
    "nan": [float("nan"), float("nan")],
    "negative": [-1, -2],
    "too large": [3, 7],
}


@pytest.mark.parametrize("name", sorted(CATEGORY_CASES))
def test_traced_bad_category_gives_an_invalid_release(name):
    assert np.all(np.asarray(_krr(CATEGORY_CASES[name])) == -1)


def test_traced_zero_explore_prob_is_invalid_unless_permitted():
    words = M.report_bits(KEY, (4, 2))
    release = jax.jit(lambda p: M.kary_randomized_response_from_bits(words, 2, p, 3)[0])
    assert np.all(np.asarray(release(0.0)) == -1)
    with M.no_privacy_permitted():
        assert np.all(np.asarray(release(0.0)) == 2)


def test_traced_fractional_counts_give_nan():
    counts = jax.jit(lambda m: M.kary_randomized_response_counts(KEY, m, 1, 0.3, jnp.ones(3) / 3))
    assert np.all(np.isnan(np.asarray(counts(10.5))))
    assert np.all(np.isnan(np.asarray(counts(-2.0))))
    assert float(jnp.sum(counts(10.0))) == 10.0


def test_bernoulli_rr_traced_invalid_is_a_fair_coin():
    # n = 40000 reports; a fair coin has sd sqrt(0.25 / n) = 0.0025: 6 sd = 0.015. The true
    # bit has probability 1 (prob_one = 1), so a leak would show as a mean near 1.
    n = 40_000
    words = M.report_bits(KEY, (n,))
    fn = jax.jit(M.randomized_response_bernoulli_from_bits)
    for prob_one, r in ((1.0, jnp.nan), (1.0, -0.5), (1.0, 1.5), (2.0, 0.5), (jnp.nan, 0.5)):
        mean = float(jnp.mean(fn(words, prob_one, r)))
        assert abs(mean - 0.5) < 0.015, (prob_one, r, mean)
    # r = 1 traced is "no privacy": a fair coin too, unless permitted
    assert abs(float(jnp.mean(fn(words, 1.0, 1.0))) - 0.5) < 0.015
    with M.no_privacy_permitted():
        assert float(jnp.mean(fn(words, 1.0, 1.0))) == 1.0


# --------------------------------------------------------------------------- exact thresholds
def _rates(dtype):
    rng = np.random.default_rng(3)
    r = np.concatenate([rng.uniform(0, 1, 200), 1 - 2.0 ** -np.arange(1, 24), [0.5, 2**-30]])
    return r.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32])
def test_rr_flip_threshold_is_the_exact_ceiling(dtype):
    r = _rates(dtype)
    ours = np.asarray(rr.flip_threshold(jnp.asarray(r)), np.int64)
    for value, got in zip(r.tolist(), ours.tolist(), strict=True):
        exact = math.ceil((1 - Fraction(value)) / 2 * 2**32)
        assert got == exact, (value, got, exact)


def test_rr_flips_at_high_budget():
    # r = 1 - 2^-23 (eps ~ 16.6): a float32 uniform resolves 2^-23 and never flips; the words
    # do, with probability ceil((1-r)/2 2^32) / 2^32 = 2^-24 exactly.
    r = np.float32(1 - 2.0**-23)
    threshold = int(rr.flip_threshold(r))
    assert threshold == 2**8
    words = jnp.array([threshold - 1, threshold], jnp.uint32)
    out = M.randomized_response_from_bits(words, jnp.array([1, 1]), r)
    assert out.tolist() == [False, True]


@pytest.mark.parametrize("k", [2, 3, 7, 10, 16])
def test_kary_category_width_is_the_exact_ceiling(k):
    rng = np.random.default_rng(k)
    ps = np.concatenate([rng.uniform(0, 1, 100), [1.0, 1 - 2**-23, 2**-31, 3e-8, 0.5]])
    ps = ps.astype(np.float32)
    width, capped = kary.category_width(jnp.asarray(ps), k)
    for p, w, c in zip(
        ps.tolist(), np.asarray(width).tolist(), np.asarray(capped).tolist(), strict=True
    ):
        raw = math.ceil(Fraction(float(p)) * 2**32 / k)
        cap = 2**32 // k
        assert w == min(raw, cap) and c == (raw > cap), (p, k, w, raw, cap)


@pytest.mark.parametrize("xi,k", [(18.0, 2), (20.0, 5), (0.0, 3), (2.0, 10)])
def test_kary_law_is_exact_to_two_to_minus_32(xi, k):
    # The law is a function of the integer width Q: each other category has probability
    # Q / 2^32 >= its nominal 1 / (k - 1 + e^xi), within 2^-32 of it.
    p = np.float32(acc.krr_explore_prob(np.float32(xi), k))
    width, capped = kary.category_width(jnp.asarray(p), k)
    other = Fraction(int(width), 2**32)
    nominal = Fraction(float(p)) / k
    assert not bool(capped) or xi == 0.0
    if not bool(capped):
        assert nominal <= other < nominal + Fraction(1, 2**32)


def test_kary_high_budget_shows_other_categories():
    # xi = 18, K = 2: a float32 uniform below p = 3e-8 is only u = 0, so the other category was
    # never shown. With words, every word below Q shows category 0 (then explores).
    p = float(acc.krr_explore_prob(18.0, 2))
    width = int(kary.category_width(jnp.float32(p), 2)[0])
    assert width >= 60
    words = jnp.array([[0, 0], [width - 1, 0], [width, 0], [2 * width, 0]], jnp.uint32)
    report, explored, _ = M.kary_randomized_response_from_bits(words, 1, p, 2)
    assert report.tolist() == [0, 0, 1, 1] and explored.tolist() == [True, True, True, False]


def test_kary_refuses_a_budget_it_cannot_honour():
    with pytest.raises(ValueError, match="too large"):
        M.kary_randomized_response(KEY, jnp.array([0]), 40.0, 2)
    words = M.report_bits(KEY, (3, 2))
    out = jax.jit(lambda p: M.kary_randomized_response_from_bits(words, 1, p, 2)[0])(1e-12)
    assert np.all(np.asarray(out) == -1)


def test_kary_uniform_output_is_exactly_uniform_for_a_power_of_two():
    # p = 1, K = 4: Q = 2^30 and the four quarters of the words show 0, 1, 2, 3.
    words = jnp.array([[0, 0], [2**30, 0], [2**31, 0], [3 * 2**30, 0]], jnp.uint32)
    report, explored, _ = M.kary_randomized_response_from_bits(words, 2, 1.0, 4)
    assert report.tolist() == [0, 1, 2, 3] and all(explored.tolist())


def test_kary_capped_remainder_redraws_then_fails_closed():
    # p = 1, K = 3: Q = floor(2^32 / 3) = 1431655765 and words >= 3Q (one word) redraw from
    # the second word; a second remainder word gives -1.
    q = 2**32 // 3
    words = jnp.array([[3 * q, 5], [3 * q, 3 * q]], jnp.uint32)
    report, explored, _ = M.kary_randomized_response_from_bits(words, 0, 1.0, 3)
    assert report.tolist() == [0, -1] and explored.tolist() == [True, True]


# --------------------------------------------------------------------------- granular claim
@pytest.mark.parametrize(
    "sens,g,dim,mu", [(1.3, 2**-2, 1, 0.5), (0.7, 2**-3, 4, 2.0), (1.0, 2**-4, 2, 1.0)]
)
def test_granular_claim_rounding(sens, g, dim, mu):
    # Delta_g = Delta + g sqrt(d); shift = ceil(Delta_g / g); sigma = Delta_g / (mu g)
    sens_g = sens + g * math.sqrt(dim)
    event = M.granular_claim(sens, mu, g, dim)
    assert float(event.shift) == math.ceil(sens_g / g - 1e-9)
    assert float(event.sigma) == pytest.approx(sens_g / (mu * g), rel=1e-6)
    assert event.dim == dim


# --------------------------------------------------------------------------- bandits claim
def test_uniform_strategy_event_is_kary_rr_over_the_arms_in_use():
    # arm-specific budgets: tests/bandits/test_arm_channel.py (exact weighted channel)
    from ldpjax import bandits

    env = bandits.make_environment([0.3, 0.2, 0.1], num_arms=2)
    config = bandits.PolicyConfig(max_arms=3)
    constant = bandits.epsilon_greedy_params(env, "constant", 1.5)
    event = bandits.epsilon_greedy(config).privacy_event(constant)
    assert float(event.xi) == 1.5 and int(event.k) == 2


# --------------------------------------------------------------------------- keys
def test_secure_key_comes_from_the_os_csprng(monkeypatch):
    # 128 bits of secrets.token_bytes; more in tests/mechanisms/test_secure_release.py
    import secrets

    k1, k2 = M.secure_key(), M.secure_key()
    assert not np.array_equal(jax.random.key_data(k1), jax.random.key_data(k2))
    monkeypatch.setattr(secrets, "token_bytes", lambda n: bytes(range(n)))
    key = M.secure_key()
    expected = np.frombuffer(bytes(range(16)), np.uint32)
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(key)), expected)
    with pytest.raises(ValueError, match="impl='threefry2x32' cannot hold a release key"):
        M.secure_key("threefry2x32")  # 64-bit keys: refused
    assert M.gaussian_mechanism(M.secure_key(), X3, 1.0, 1.0, granularity=2**-6).shape == (3,)
