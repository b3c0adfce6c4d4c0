"""Unary encoding (SUE, OUE, any (p, q)): exact thresholds, law, audit, fail-closed, jit.

Expected values come from exact rationals (``fractions``) and 60-digit ``mpmath``, never from
ldpjax: the OUE / SUE word counts must be the exact ceiling of 2^32 / (e^x + 1) for the real
e^x of the float budget (one word more only within the double-word error of an integer), the
(p, q) thresholds the exact floor / ceiling of p 2^32 and q 2^32, and the realised epsilon they
give never exceeds the claim. The law of a report (all d bits jointly) matches the nominal one
(chi-square at 1e-6), an empirical epsilon (Clopper-Pearson) stays below the claim and reaches
most of it, and every invalid argument fails closed. Run in float32 and under x64
(``precision``).
"""

from __future__ import annotations

import importlib
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax.accounting.accountant import epsilon
from ldpjax.accounting.frequency_events import UnaryEncodingEvent, oue_event, sue_event
from ldpjax.mechanisms import no_privacy_permitted
from tests.mechanisms.oracle_checks import audit_epsilon, chi_square_ok

# by module: the package exports a function of the same name
ue = importlib.import_module("ldpjax.mechanisms.unary_encoding")

TWO32 = 2**32
KEY = jax.random.key(11)


@pytest.fixture(autouse=True)
def _digits():
    """60-digit mpmath for this module's tests only (mp.mp.dps is global to the process)."""
    with mp.workdps(60):
        yield


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    """The release dtype: float32 (JAX's default) or float64 (x64 on for the test)."""
    with jax.enable_x64(request.param == "float64"):
        yield np.dtype(request.param)


def _budgets(dtype) -> np.ndarray:
    rng = np.random.default_rng(5)
    grid = np.concatenate(
        [
            rng.uniform(0, 25, 60),
            10.0 ** rng.uniform(-8, 0, 20),
            [0.0, 1e-30, 0.5, 1.0, 2.0, 22.0, 30.0, 60.0],
        ]
    )
    return grid.astype(dtype)


def _other_words_exact(x: float) -> int:
    """ceil(2^32 / (e^x + 1)) for the exact value of the float x, capped at 2^31."""
    return min(int(mp.ceil(mp.mpf(TWO32) / (mp.exp(mp.mpf(x)) + 1))), 2**31)


def _slack(dtype) -> float:
    return 2.0**-9 if dtype == np.float32 else 2.0**-40


@pytest.mark.parametrize("preset", ["oue", "sue"])
def test_preset_thresholds_are_the_exact_ceiling(precision, preset):
    eps = _budgets(precision)
    fn = ue.oue_thresholds if preset == "oue" else ue.sue_thresholds
    t_p, t_q, certain, ok = jax.jit(fn)(jnp.asarray(eps))
    assert bool(np.all(ok)) and not np.any(certain)
    for e, tp, tq in zip(
        eps.tolist(), np.asarray(t_p).tolist(), np.asarray(t_q).tolist(), strict=True
    ):
        x = e if preset == "oue" else e / 2  # halving a float is exact
        y = mp.mpf(TWO32) / (mp.exp(mp.mpf(x)) + 1)
        exact = _other_words_exact(x)
        assert exact <= tq <= exact + 1, (e, tq, exact)
        if tq == exact + 1 and tq <= 2**31:  # one word more only within the error bound
            assert exact - y < _slack(precision), (e, tq)
        assert tp == (2**31 if preset == "oue" else TWO32 - tq)
        # the realised epsilon never exceeds the budget; each probability within 2^-32
        realised = mp.log(mp.mpf(tp) * (TWO32 - tq) / (mp.mpf(TWO32 - tp) * tq))
        assert realised <= mp.mpf(e), (e, tp, tq)
        assert (
            0
            <= mp.mpf(tq) / TWO32 - 1 / (mp.exp(mp.mpf(x)) + 1)
            <= 2.0**-32 * (1 + _slack(precision))
            or tq == 2**31
        )


def test_oue_keeps_exactly_half_the_words():
    t_p, _, _, _ = ue.oue_thresholds(jnp.array([0.0, 0.7, 5.0, 40.0]))
    assert np.asarray(t_p).tolist() == [2**31] * 4


def test_pq_thresholds_are_exact_for_the_floats(precision):
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.999, 200).astype(precision)
    q = (p * rng.uniform(0.0, 1.0, 200)).astype(precision)
    q = np.maximum(q, np.asarray(1e-7, precision))
    t_p, t_q, certain, ok = ue.unary_encoding_thresholds(p, q)
    assert bool(np.all(ok)) and not np.any(certain)
    for pp, qq, tp, tq in zip(
        p.tolist(), q.tolist(), np.asarray(t_p).tolist(), np.asarray(t_q).tolist(), strict=True
    ):
        assert tp == math.floor(Fraction(pp) * TWO32)
        assert tq == min(math.ceil(Fraction(qq) * TWO32), tp)
        claim = mp.log(mp.mpf(pp) * (1 - mp.mpf(qq)) / ((1 - mp.mpf(pp)) * mp.mpf(qq)))
        realised = mp.log(mp.mpf(tp) * (TWO32 - tq) / (mp.mpf(TWO32 - tp) * tq))
        assert realised <= claim
    event = UnaryEncodingEvent(jnp.asarray(p), jnp.asarray(q))
    claims = np.asarray(epsilon(event, 0.0), np.float64)
    exact = [
        float(mp.log(mp.mpf(a) * (1 - mp.mpf(b)) / ((1 - mp.mpf(a)) * mp.mpf(b))))
        for a, b in zip(p.tolist(), q.tolist(), strict=True)
    ]
    assert np.all(claims >= exact)  # the event rounds up, by at most its rounding bound: a
    # few units of epsilon of the four log terms (eps is a difference of logits)
    size = np.array(
        [
            sum(
                abs(float(t))
                for t in (mp.log(a), mp.log(1 - mp.mpf(a)), mp.log(b), mp.log(1 - mp.mpf(b)))
            )
            for a, b in zip(p.tolist(), q.tolist(), strict=True)
        ]
    )
    assert np.all(claims - exact <= 16 * np.finfo(precision).eps * (size + np.abs(exact)))


def test_preset_events_round_their_probabilities_towards_less_privacy(precision):
    # the claims' own (p, q): p never below, q never above the exact preset for the float eps
    eps = _budgets(precision)[:60]
    oue, sue = oue_event(jnp.asarray(eps)), sue_event(jnp.asarray(eps))
    for e, q_oue, p_sue, q_sue in zip(
        eps.tolist(),
        np.asarray(oue.q).tolist(),
        np.asarray(sue.p).tolist(),
        np.asarray(sue.q).tolist(),
        strict=True,
    ):
        assert mp.mpf(q_oue) <= 1 / (mp.exp(mp.mpf(e)) + 1)
        assert mp.mpf(q_sue) <= 1 / (mp.exp(mp.mpf(e) / 2) + 1)
        assert mp.mpf(p_sue) >= 1 / (1 + mp.exp(-mp.mpf(e) / 2))
    assert np.all(np.asarray(oue.p) == 0.5)


def test_concrete_pq_round_towards_privacy():
    # 0.3 is not a float32: p is rounded down, q up, before the thresholds
    t_p, t_q, _, _ = ue.unary_encoding_thresholds(0.3, 0.1)
    assert int(t_p) <= math.floor(Fraction(0.3) * TWO32)
    assert int(t_q) >= math.ceil(Fraction(0.1) * TWO32)


def test_presets_claim_their_budget(precision):
    eps = np.array([0.1, 1.0, 3.0, 8.0], precision)
    for make in (oue_event, sue_event):
        claim = np.asarray(epsilon(make(jnp.asarray(eps)), 0.0), np.float64)
        assert np.all(claim >= eps.astype(np.float64))
        np.testing.assert_allclose(claim, eps, rtol=2e-4 if precision == np.float32 else 1e-12)


# --------------------------------------------------------------------------- law and audit
def _patterns(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.int64) * (2 ** np.arange(bits.shape[-1]))).sum(-1)


def _joint_probs(item: int, p: float, q: float, d: int) -> np.ndarray:
    out = np.ones(2**d)
    for code in range(2**d):
        for j in range(d):
            one = (code >> j) & 1
            prob = p if j == item else q
            out[code] *= prob if one else 1 - prob
    return out


@pytest.mark.parametrize("name", ["oue", "sue", "pq"])
def test_law_of_a_report_matches_the_nominal_one(name):
    d, item, n, eps = 3, 1, 60_000, 1.0
    if name == "oue":
        out = ue.optimized_unary_encoding(KEY, jnp.full(n, item), eps, d)
        p, q = 0.5, 1 / (math.exp(eps) + 1)
    elif name == "sue":
        out = ue.symmetric_unary_encoding(KEY, jnp.full(n, item), eps, d)
        p, q = 1 / (1 + math.exp(-eps / 2)), 1 / (1 + math.exp(eps / 2))
    else:
        p, q = 0.7, 0.2
        out = ue.unary_encoding(KEY, jnp.full(n, item), p, q, d)
    counts = np.bincount(_patterns(np.asarray(out)), minlength=2**d)
    ok, stat, bound = chi_square_ok(counts, _joint_probs(item, p, q, d))
    assert ok, (stat, bound)


@pytest.mark.parametrize("preset,eps", [("oue", 1.0), ("sue", 2.0)])
def test_audit_unary_encoding(preset, eps):
    n, d = 100_000, 3
    fn = ue.optimized_unary_encoding if preset == "oue" else ue.symmetric_unary_encoding
    k0, k1 = jax.random.split(jax.random.key(7))
    out0 = _patterns(np.asarray(fn(k0, jnp.zeros(n, jnp.int32), eps, d)))
    out1 = _patterns(np.asarray(fn(k1, jnp.ones(n, jnp.int32), eps, d)))
    hits0 = np.bincount(out0, minlength=2**d)
    hits1 = np.bincount(out1, minlength=2**d)
    eps_low = audit_epsilon(hits0, hits1, n)
    claim = float(epsilon((oue_event if preset == "oue" else sue_event)(eps), 0.0))
    assert eps_low <= claim
    assert eps_low > 0.8 * claim  # the audit has power


def test_simulation_counts_have_the_nominal_mean():
    hist = jnp.array([300.0, 0.0, 700.0, 5.0])
    p, q = 0.6, 0.15
    draws = np.asarray(ue.unary_encoding_counts(KEY, jnp.broadcast_to(hist, (400, 4)), p, q))
    n = float(hist.sum())
    mean = np.asarray(hist) * p + (n - np.asarray(hist)) * q
    var = np.asarray(hist) * p * (1 - p) + (n - np.asarray(hist)) * q * (1 - q)
    z = 5.6  # two-sided 1e-6 over 4 entries
    assert np.all(np.abs(draws.mean(0) - mean) <= z * np.sqrt(var / 400))


# --------------------------------------------------------------------------- fail closed, jit
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: ue.optimized_unary_encoding(KEY, 1, -1.0, 3), "eps"),
        (lambda: ue.optimized_unary_encoding(KEY, 1, float("nan"), 3), "eps"),
        (lambda: ue.symmetric_unary_encoding(KEY, 3, 1.0, 3), "item"),
        (lambda: ue.optimized_unary_encoding(KEY, 1, 1.0, 1), "d"),
        (lambda: ue.unary_encoding(KEY, 1, 0.2, 0.5, 3), "q must be <= p"),
        (lambda: ue.unary_encoding(KEY, 1, 1.5, 0.5, 3), "p"),
        (lambda: ue.unary_encoding(KEY, 1, 0.5, 1.0, 3), "q"),
        (lambda: ue.optimized_unary_encoding(KEY, 1, jnp.float16(1.0), 3), "float16"),
        (lambda: ue.unary_encoding(KEY, 1, jnp.bfloat16(0.5), 0.25, 3), "bfloat16"),
    ],
)
def test_concrete_bad_arguments_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_traced_bad_arguments_give_the_invalid_report():
    oue = jax.jit(ue.optimized_unary_encoding, static_argnums=3)
    for eps in (-1.0, float("nan"), float("inf")):
        assert np.asarray(oue(KEY, 1, eps, 4)).tolist() == [-1] * 4
    assert np.asarray(oue(KEY, jnp.array([4, -1, 2]), 1.0, 4))[:2].tolist() == [[-1] * 4] * 2
    general = jax.jit(ue.unary_encoding, static_argnums=4)
    for p, q in ((0.2, 0.5), (1.0, 0.2), (0.5, 0.0), (jnp.nan, 0.1)):
        assert np.asarray(general(KEY, 1, p, q, 4)).tolist() == [-1] * 4


def test_no_privacy_only_when_checked():
    d = 4
    concrete = ue.symmetric_unary_encoding(KEY, jnp.full(50, 2), float("inf"), d)
    assert np.all(np.asarray(concrete) == np.eye(d, dtype=np.int8)[2])
    traced = jax.jit(ue.symmetric_unary_encoding, static_argnums=3)
    with no_privacy_permitted():
        permitted = traced(KEY, jnp.full(50, 2), float("inf"), d)
    assert np.all(np.asarray(permitted) == np.eye(d, dtype=np.int8)[2])


@pytest.mark.parametrize("name", ["oue", "sue", "pq"])
def test_jits_with_literal_and_traced_budget(precision, name):
    items = jnp.array([0, 3, 1])
    if name == "pq":
        release = lambda k, b: ue.unary_encoding(k, items, b, 0.2, 4)  # noqa: E731
        budget = 0.6
    else:
        fn = ue.optimized_unary_encoding if name == "oue" else ue.symmetric_unary_encoding
        release = lambda k, b: fn(k, items, b, 4)  # noqa: E731
        budget = 1.3
    literal = np.asarray(jax.jit(lambda k: release(k, budget))(KEY))
    traced = np.asarray(jax.jit(release)(KEY, jnp.asarray(budget, precision)))
    assert literal.shape == (3, 4) and np.all(literal >= 0)
    np.testing.assert_array_equal(literal, traced)
