"""K-ary randomized response is exact for its budget: integer widths against exact arithmetic.

Every expected value comes from exact rationals (``fractions``) or 60-digit ``mpmath``, never
from ldpjax: the width by budget must be the exact ceil(2^32 / (K - 1 + e^xi)) for the real
e^xi of the float xi (one word more only where that quotient lies within the double-word error
of an integer), so the realised epsilon log((2^32 - (K - 1) Q) / Q) never exceeds xi; the
width by exploration probability is exact for the float p, and ``krr_budget(p)`` never reports
less than the realised epsilon; the weighted widths are the exact ceilings of
2^32 a_j / (1 + S). Then: every K-RR function jits with a literal and with a traced budget, a
traced non-integer k gives -1, and the count form refuses low precision and draws its explorer
count and its multinomial from different keys. Run in float32 and under x64 (``precision``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax import mechanisms as M
from ldpjax.accounting import krr_budget
from ldpjax.accounting import pure as pure_lib
from ldpjax.mechanisms import _float_float as ff
from ldpjax.mechanisms import kary

mp.mp.dps = 60
KEY = jax.random.key(0)
TWO32 = 2**32


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    """The release dtype: float32 (JAX's default) or float64 (x64 on for the test)."""
    with jax.enable_x64(request.param == "float64"):
        yield np.dtype(request.param)


def _exact_quotient(xi: float, k: int) -> mp.mpf:
    """2^32 / (K - 1 + e^xi) for the exact value of the float xi."""
    return mp.mpf(TWO32) / (k - 1 + mp.exp(mp.mpf(xi)))


def _budgets(dtype, k: int) -> np.ndarray:
    rng = np.random.default_rng(k)
    bound = math.log1p(k * (TWO32 - 1.0))  # the refusal bound: exploration 2^-32
    xi = np.concatenate(
        [
            rng.uniform(0, 25, 150),
            10.0 ** rng.uniform(-9, 0, 40),
            [0.0, 1.0, 2.0, 16.0, 17.0, bound * (1 - 1e-6)],
            NEAR_INTEGER,
        ]
    )
    return xi.astype(dtype)


#: float32 budgets whose quotient 2^32 / (K - 1 + e^xi) lies a few 1e-6 *above* an integer
#: (K = 2, 2, 3; found by a scan of consecutive float32 values, checked by mpmath in the test):
#: a double-word evaluation that lands below the integer would give a width one word short
#: without the margin that budget_width adds before the ceiling.
NEAR_INTEGER = [0.050215207040309906, 0.05361051484942436, 0.05127822980284691]


# --------------------------------------------------------------------------- by budget
@pytest.mark.parametrize("k", [2, 3, 7, 1000])
def test_budget_width_is_the_exact_ceiling(precision, k):
    xis = _budgets(precision, k)
    width, capped = jax.jit(kary.budget_width)(jnp.asarray(xis), k)
    # the double-word error bound of budget_width, in words: 2^-9 (float32), 2^-44 (float64)
    slack = 2.0**-9 if precision == np.float32 else 2.0**-44
    extra = 0
    for xi, q, c in zip(
        xis.tolist(), np.asarray(width).tolist(), np.asarray(capped).tolist(), strict=True
    ):
        y = _exact_quotient(xi, k)
        exact, cap = int(mp.ceil(y)), TWO32 // k
        if c:  # the cap floor(2^32 / K) applied: the ceiling (or the word above it) exceeds it
            assert q == cap and exact + 1 > cap, (xi, k)
            continue
        assert exact <= cap
        assert exact <= q <= exact + 1, (xi, k, q, exact)
        if q == exact + 1:  # only within the error bound below an integer
            assert exact - y < slack, (xi, k, q, float(exact - y))
            extra += 1
        # realised epsilon <= xi, and the other categories within 2^-32 (+ the slack) of 1 / D
        realised = mp.log(mp.mpf(TWO32 - (k - 1) * q) / q)
        assert realised <= mp.mpf(xi), (xi, k, q)
        assert 0 <= q - y < 1 + slack
    assert extra <= 2


def test_budget_width_kills_the_rounded_probability_route():
    # K = 1000: the width of the float32 exploration probability is below the exact ceiling
    # for some budgets (the route kary_randomized_response took before), so its realised
    # epsilon exceeds xi (by up to about 1e-5); the width by budget never does.
    k = 1000
    worst = mp.mpf(0)
    xis = np.linspace(3.0, 25.0, 400).astype(np.float32)
    for xi in xis.tolist():
        p32 = np.float32(float(mp.mpf(k) / (k - 1 + mp.exp(mp.mpf(xi)))))
        old = math.ceil(Fraction(float(p32)) * TWO32 / k)
        worst = max(worst, mp.log(mp.mpf(TWO32 - (k - 1) * old) / old) - mp.mpf(xi))
    assert worst > 0  # the bug the exact width removes: a realised epsilon above xi
    width, _ = kary.budget_width(jnp.asarray(xis), k)
    for xi, q in zip(xis.tolist(), np.asarray(width).tolist(), strict=True):
        assert mp.log(mp.mpf(TWO32 - (k - 1) * q) / q) <= mp.mpf(xi)


def _boundary_words(monkeypatch, words):
    monkeypatch.setattr(kary, "report_bits", lambda key, shape: jnp.asarray(words, jnp.uint32))


@pytest.mark.parametrize("xi,k", [(2.5, 1000), (7.0, 5), (1.0, 2)])
def test_release_by_budget_decides_on_the_exact_width(monkeypatch, precision, xi, k):
    # words just below and at K Q: the last exploring word shows category K - 1, the next
    # keeps the truth; Q is the exact ceiling (mpmath), so the release is exact for xi
    q = int(mp.ceil(_exact_quotient(float(np.asarray(xi, precision)), k)))
    _boundary_words(monkeypatch, [[k * q - 1, 0], [k * q, 0], [q - 1, 0], [q, 0]])
    truth = jnp.full((4,), 1)
    report = kary.kary_randomized_response(KEY, truth, jnp.asarray(xi, precision), k)
    assert report.tolist() == [k - 1, 1, 0, 1]


def test_release_by_budget_at_the_refusal_bound(precision):
    k = 3
    bound = math.log1p(k * (TWO32 - 1.0))
    ok = float(np.nextafter(np.asarray(bound, precision), np.asarray(0.0, precision)))
    assert M.kary_randomized_response(KEY, jnp.zeros(3, int), ok * (1 - 1e-6), k).shape == (3,)
    with pytest.raises(ValueError, match="xi is too large"):
        M.kary_randomized_response(KEY, jnp.zeros(3, int), bound * (1 + 1e-6), k)
    width, _ = kary.budget_width(jnp.asarray(ok * (1 - 1e-6), precision), k)
    assert int(width) == 1  # one word each: exploration probability 3 / 2^32 >= 2^-32


def test_concrete_budget_is_rounded_down_to_the_release_dtype():
    # 1 + 2^-30 is not a float32: the release uses the float32 below it (never a larger budget)
    xi = 1.0 + 2.0**-30
    assert float(np.float32(xi)) == 1.0  # nearest is 1.0 here
    xi = 1.0 + 3 * 2.0**-25  # nearest float32 is 1 + 2^-23 > xi
    assert float(np.float32(xi)) > xi
    assert float(kary._float_budget(xi, jnp.float32)) == 1.0


# --------------------------------------------------------------------------- by probability
@pytest.mark.parametrize("k", [2, 3, 10, 1000])
def test_krr_budget_never_under_reports_the_realised_mechanism(precision, k):
    rng = np.random.default_rng(k + 7)
    ps = np.concatenate(
        [
            rng.uniform(0, 1, 300),
            10.0 ** rng.uniform(-9, 0, 100),
            1 - 10.0 ** rng.uniform(-7, -1, 50),
            [1.0, 0.5],
        ]
    ).astype(precision)
    ps = ps[ps >= 2.0**-32]
    claim = np.asarray(jax.jit(krr_budget)(jnp.asarray(ps), k), np.float64)
    for p, c in zip(ps.tolist(), claim.tolist(), strict=True):
        exact = mp.log1p(k * (1 - mp.mpf(p)) / mp.mpf(p))
        raw, cap = math.ceil(Fraction(p) * TWO32 / k), TWO32 // k
        # capped (raw > cap): the leftover words redraw, every category has the same law
        realised = mp.log(mp.mpf(TWO32 - (k - 1) * raw) / raw) if raw <= cap else mp.mpf(0)
        assert mp.mpf(c) >= exact and mp.mpf(c) >= realised, (p, k, c, float(exact))


def test_krr_budget_rounding_margin_is_needed(monkeypatch):
    # without the margin the float evaluation falls below the exact value for some p: the
    # test above has teeth (it fails with KRR_ROUND_UP = 0)
    monkeypatch.setattr(pure_lib, "KRR_ROUND_UP", 0)
    ps = np.random.default_rng(1).uniform(0.01, 1, 400).astype(np.float32)
    claim = np.asarray(krr_budget(jnp.asarray(ps), 3), np.float64)
    below = [
        mp.mpf(c) < mp.log1p(3 * (1 - mp.mpf(p)) / mp.mpf(p))
        for p, c in zip(ps.tolist(), claim.tolist(), strict=True)
    ]
    assert any(below)


@pytest.mark.parametrize("k", [2, 5, 16])
def test_category_width_is_exact_for_the_float_probability(precision, k):
    ps = np.random.default_rng(k).uniform(0, 1, 200).astype(precision)
    width, capped = jax.jit(kary.category_width)(jnp.asarray(ps), k)
    for p, w, c in zip(
        ps.tolist(), np.asarray(width).tolist(), np.asarray(capped).tolist(), strict=True
    ):
        raw = math.ceil(Fraction(p) * TWO32 / k)
        assert w == min(raw, TWO32 // k) and c == (raw > TWO32 // k)


# --------------------------------------------------------------------------- weighted widths
def weighted_nominal(budgets, k):
    """Exact (mpmath) exploring probability of each arm in use, a_j / (1 + S)."""
    xi = [mp.mpf(x) for x in budgets[:k]]
    if any(x == 0 for x in xi):
        zeros = sum(x == 0 for x in xi)
        return [mp.mpf(1) / zeros if x == 0 else mp.mpf(0) for x in xi]
    rates = [mp.mpf(0) if x == mp.inf else 1 / mp.expm1(x) for x in xi]
    total = 1 + sum(rates)
    return [a / total for a in rates]


WEIGHTED = [
    ([1.0, 16.0], 2),
    ([1.0, 17.0], 2),
    ([0.5, 1.0, 2.0], 3),
    ([0.5, 1.0, 21.0], 3),
    ([0.25, 3.0, 3.0, 8.0], 4),
    ([2.0, 2.0], 2),
    ([0.0, 1.0, 2.0], 3),
    ([0.0, 0.0, 5.0], 3),
    ([1.0, 2.0, 0.3, 9.0], 3),  # padding beyond k = 3
]


def test_weighted_widths_are_the_exact_ceilings(precision):
    # one compiled call over every case (padded to 4 columns, k per row)
    xi = np.asarray([b + [np.inf] * (4 - len(b)) for b, _ in WEIGHTED], precision)
    ks = np.asarray([k for _, k in WEIGHTED])
    widths, capped = jax.jit(jax.vmap(kary.weighted_category_widths))(jnp.asarray(xi), ks)
    for row, k, got, cap in zip(
        xi, ks.tolist(), np.asarray(widths).tolist(), np.asarray(capped).tolist(), strict=True
    ):
        budgets = row.astype(np.float64).tolist()
        assert all(w == 0 for w in got[k:])
        zeros = sum(x == 0 for x in budgets[:k])
        if zeros:  # all exploration on the zero budgets (2^32 - 1 words, capped, for one)
            share = TWO32 // zeros if zeros > 1 else TWO32 - 1
            assert got[:k] == [share if x == 0 else 0 for x in budgets[:k]]
            assert cap == (zeros == 1 or TWO32 % zeros != 0)
            continue
        assert not cap
        for w, n in zip(got[:k], weighted_nominal(budgets, k), strict=True):
            exact = int(mp.ceil(n * TWO32))
            assert exact <= w <= exact + 1, (budgets, w, exact)
            if w == exact + 1:  # only within the error bound below an integer
                assert exact - n * TWO32 < 2.0**-8


def test_double_word_sums_survive_constant_operands_under_jit():
    # XLA rewrites (b + c) - c as b when c is a compile-time constant; the error term of a
    # double-word sum would then vanish (1 + 0.58197683 is a tie in float32: error 2^-24)
    b = np.float32(0.5819768309593201)
    s, e = jax.jit(lambda x: ff.two_sum(jnp.ones_like(x), x))(b)
    assert Fraction(float(s)) + Fraction(float(e)) == 1 + Fraction(float(b)) and float(e) != 0
    literal = jax.jit(lambda: kary.weighted_category_widths(jnp.asarray([1.0, 16.0]), 2)[0])()
    assert np.asarray(literal).tolist() == [1580030057, 306]  # ceil of 1580030056.31, 305.53


def test_weighted_widths_of_tiny_budgets_are_capped():
    # every budget 1e-10: R = 2^32 / (1 + S) is a fraction of a word, the ceilings overflow
    # 2^32, so each drops a word and the leftover words redraw (capped, as K-RR near xi = 0)
    widths, capped = kary.weighted_category_widths(jnp.full(3, 1e-10), 3)
    widths = [int(w) for w in np.asarray(widths)]
    assert bool(capped) and sum(widths) <= TWO32
    assert all(abs(w - TWO32 / 3) < 2 for w in widths)


@pytest.mark.parametrize("columns", [4, 12])  # unrolled (<= 8) and vectorised paths
def test_weighted_release_maps_words_to_the_ranges(columns):
    widths = jnp.asarray([5, 0, 7] + [0] * (columns - 3), jnp.uint32)
    words = [[0, 0], [4, 0], [5, 0], [11, 0], [12, 0], [2**32 - 1, 0]]
    report, explored, spare = kary.weighted_randomized_response_from_bits(
        jnp.asarray(words, jnp.uint32), 1, widths, False, 3
    )
    assert report.tolist() == [0, 0, 2, 2, 1, 1]
    assert explored.tolist() == [True, True, True, True, False, False]
    assert np.all((np.asarray(spare) >= 0) & (np.asarray(spare) < 1))
    # an arm in use with no words while the truth keeps some: no privacy, refused when traced
    traced = jax.jit(
        lambda w: kary.weighted_randomized_response_from_bits(
            jnp.asarray(words, jnp.uint32), 1, w, False, 3
        )[0]
    )
    assert np.all(np.asarray(traced(widths)) == -1)
    with M.no_privacy_permitted():
        assert np.asarray(traced(widths)).tolist() == [0, 0, 2, 2, 1, 1]


# --------------------------------------------------------------------------- jit and k
def test_every_kary_function_jits_with_a_literal_budget():
    cats = jnp.asarray([0, 1, 2, 3])
    words = M.report_bits(KEY, (4, 2))
    widths, capped = kary.weighted_category_widths([0.5, 1.0, 2.0, 3.0])
    cases = {
        "kary_randomized_response": lambda c: M.kary_randomized_response(KEY, c, 3.0, 4),
        "explore": lambda c: M.kary_randomized_response_explore(KEY, c, 0.3, 4),
        "from_bits": lambda c: M.kary_randomized_response_from_bits(words, c, 0.3, 4)[0],
        "weighted": lambda c: kary.weighted_randomized_response_from_bits(
            words, c, widths, capped, 4
        )[0],
        "counts": lambda c: M.kary_randomized_response_counts(
            KEY, 50.0, c[1], 0.3, jnp.ones(4) / 4
        ),
        "budget_width": lambda c: kary.budget_width(3.0, 4)[0] + c,
        "category_width": lambda c: kary.category_width(0.3, 4)[0] + c,
        "weighted_widths": lambda c: kary.weighted_category_widths([0.5, 1.0, 2.0, 3.0])[0] + c,
    }
    for name, fn in cases.items():
        assert np.array_equal(np.asarray(jax.jit(fn)(cats)), np.asarray(fn(cats))), name


def test_every_kary_function_jits_with_a_traced_budget():
    cats = jnp.asarray([0, 1, 2, 3])
    words = M.report_bits(KEY, (4, 2))
    cases = {
        "kary_randomized_response": (lambda x: M.kary_randomized_response(KEY, cats, x, 4), 3.0),
        "explore": (lambda p: M.kary_randomized_response_explore(KEY, cats, p, 4), 0.3),
        "from_bits": (lambda p: M.kary_randomized_response_from_bits(words, cats, p, 4)[0], 0.3),
        "weighted": (
            lambda x: kary.weighted_randomized_response_from_bits(
                words, cats, *kary.weighted_category_widths(x), 4
            )[0],
            jnp.asarray([0.5, 1, 2, 3.0]),
        ),
        "counts": (
            lambda p: M.kary_randomized_response_counts(KEY, 50.0, 1, p, jnp.ones(4) / 4),
            0.3,
        ),
    }
    for name, (fn, budget) in cases.items():
        assert np.array_equal(np.asarray(jax.jit(fn)(budget)), np.asarray(fn(budget))), name


def test_an_array_of_k_draws_its_own_words_per_report():
    # k of shape (n,) with one category: n reports, each on its own words (not n copies of one)
    reports = M.kary_randomized_response(KEY, 0, 0.0, jnp.full(2000, 4))
    assert reports.shape == (2000,) and len(set(np.asarray(reports).tolist())) == 4
    reports = M.kary_randomized_response_explore(KEY, 0, 1.0, jnp.full(2000, 4))
    assert reports.shape == (2000,) and len(set(np.asarray(reports).tolist())) == 4


def test_non_integer_k_is_refused_or_invalid():
    cats = jnp.asarray([0, 1, 2, 3])
    words = M.report_bits(KEY, (4, 2))
    widths = jnp.asarray([2**30, 2**30, 2**30, 2**30, 0], jnp.uint32)
    traced = {
        "kary_randomized_response": lambda k: M.kary_randomized_response(KEY, cats, 1.0, k),
        "explore": lambda k: M.kary_randomized_response_explore(KEY, cats, 0.5, k),
        "from_bits": lambda k: M.kary_randomized_response_from_bits(words, cats, 0.5, k)[0],
        "weighted": lambda k: kary.weighted_randomized_response_from_bits(
            words, cats, widths, False, k
        )[0],
    }
    for name, fn in traced.items():
        assert np.all(np.asarray(jax.jit(fn)(4.5)) == -1), name  # not K = 4
        assert np.all(np.asarray(jax.jit(fn)(4.0)) >= 0), name
        with pytest.raises(ValueError, match="k must be an integer"):
            fn(4.5)


# --------------------------------------------------------------------------- the count form
@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("argument", ["counts", "explore_prob", "weights"])
def test_counts_refuse_low_precision(dtype, argument):
    args = {
        "counts": jnp.asarray(3001.0),
        "explore_prob": jnp.asarray(0.3),
        "weights": jnp.ones(3) / 3,
    }
    args[argument] = args[argument].astype(dtype)
    with pytest.raises(ValueError, match=f"{argument} has dtype {jnp.dtype(dtype)}"):
        M.kary_randomized_response_counts(
            KEY, args["counts"], 1, args["explore_prob"], args["weights"]
        )
    with pytest.raises(ValueError, match="has dtype"):  # dtypes are static: under jit too
        jax.jit(
            lambda a: M.kary_randomized_response_counts(
                KEY, a["counts"], 1, a["explore_prob"], a["weights"]
            )
        )(args)


def test_counts_draw_explorers_and_their_arms_from_different_keys(monkeypatch):
    # A JAX key must feed one draw. The explorer count E ~ Binomial(m, p) and the explorers'
    # arms ~ Multinomial(E, w) need independent keys; a key and its split children give
    # pseudo-independent streams, so the *law* cannot reveal a reused key (a statistical test
    # passes the one-key version, which hands the multinomial the key of the explorer count).
    # The plumbing can: record the keys the two draws receive (stand-in samplers, no sampling).
    seen = {}

    def record(name, value):
        def sampler(key, count, *args, **kwargs):
            seen[name] = np.asarray(jax.random.key_data(key)).ravel().tolist()
            return jnp.zeros(jnp.shape(count) + value, jnp.float32) + jnp.asarray(count) * 0

        return sampler

    monkeypatch.setattr(kary, "binomial", record("explorers", ()))
    monkeypatch.setattr(kary, "multinomial_counts", record("arms", (3,)))
    M.kary_randomized_response_counts(KEY, 1000.0, 1, 0.4, jnp.ones(3) / 3)
    assert set(seen) == {"explorers", "arms"}
    assert seen["explorers"] != seen["arms"]
    keys = [np.asarray(jax.random.key_data(k)).ravel().tolist() for k in jax.random.split(KEY)]
    assert seen["explorers"] in keys and seen["arms"] in keys  # both children of the key
