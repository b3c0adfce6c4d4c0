"""The frequency and mean events against brute-force enumerations of the mechanisms' laws.

For each event the output laws of every pair of inputs (small d) are written out in 60-digit
``mpmath`` from the mechanism's definition, independently of ldpjax, and the profile
delta(e) = max over pairs of sum_o max(0, P(o | x) - e^e P(o | x')) is enumerated; the event's
delta must be at least that and within rounding of it (float64: 1e-12 relative; float32:
1e-5), epsilon(delta) at least the smallest e with profile <= delta (by bisection on the
enumeration) and close to it, the tradeoff curve at most the Neyman-Pearson curve of the worst
pair and close to it. Local hashing is enumerated over the pair of buckets of the two items,
uniform and independent (collision probability 1/g: the family's is at least that, see
``test_oracles_hashing.py``). The discretised piecewise mechanism's realised profile, from its
integers, stays below ``PiecewiseEvent``'s. Composition: three uses through the PLD accountant
against the enumerated three-fold product law. Gradients of the claims are finite.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax.accounting import frequency_events as F
from ldpjax.accounting.accountant import delta, epsilon, tradeoff
from ldpjax.accounting.composition import SelfComposedEvent
from tests.mechanisms.oracle_checks import pm_integers, pm_law

E = mp.e


@pytest.fixture(autouse=True)
def _digits():
    """60-digit mpmath for this module's tests only (mp.mp.dps is global to the process)."""
    with mp.workdps(60):
        yield


def _laws_ue(p, q, d=3):
    p, q = mp.mpf(p), mp.mpf(q)
    outs = list(itertools.product((0, 1), repeat=d))
    return [
        [
            mp.fprod((p if j == v else q) if b[j] else (1 - (p if j == v else q)) for j in range(d))
            for b in outs
        ]
        for v in range(d)
    ]


def _krr(eps, g, y, bucket):
    return (mp.exp(eps) if y == bucket else 1) / (mp.exp(eps) + g - 1)


def _pair_laws_lh(eps, g):
    """Laws of (h(v), h(v'), y) for the pair (v, v'), buckets uniform and independent."""
    eps = mp.mpf(eps)
    outs = list(itertools.product(range(g), range(g), range(g)))
    first = [_krr(eps, g, y, a) / g**2 for a, b, y in outs]
    second = [_krr(eps, g, y, b) / g**2 for a, b, y in outs]
    return [first, second]


def _laws_hr(eps, d):
    eps = mp.mpf(eps)
    k = 1 << d.bit_length()
    laws = []
    for x in range(d):
        row = [(-1) ** bin((x + 1) & j).count("1") for j in range(k)]
        laws.append([(2 * mp.exp(eps) if h == 1 else 2) / (k * (mp.exp(eps) + 1)) for h in row])
    return laws


def _laws_ss(eps, d, k):
    eps = mp.mpf(eps)
    subsets = list(itertools.combinations(range(d), k))
    z = math.comb(d - 1, k - 1) * mp.exp(eps) + math.comb(d - 1, k)
    return [[(mp.exp(eps) if x in s else 1) / z for s in subsets] for x in range(d)]


def _laws_duchi(eps, xs=(-1, -0.5, 0, 0.5, 1)):
    r = mp.tanh(mp.mpf(eps) / 2)
    return [[(1 + x * r) / 2, (1 - x * r) / 2] for x in map(mp.mpf, xs)]


def _pm_cells(eps, x):
    """(breakpoints, densities) of the continuous PM's release for input x."""
    s = mp.exp(mp.mpf(eps) / 2)
    c = (s + 1) / (s - 1)
    p = (s * s - s) / (2 * s + 2)
    left = (c + 1) / 2 * x - (c - 1) / 2
    return [-c, left, left + c - 1, c], [p / s**2, p, p / s**2]


def _laws_pm(eps, xs=(-1, -0.3, 0, 1)):
    """Cell masses of the continuous PM on a common refinement of every input's breakpoints."""
    cuts = sorted({b for x in xs for b in _pm_cells(eps, mp.mpf(x))[0]})
    laws = []
    for x in xs:
        points, dens = _pm_cells(eps, mp.mpf(x))
        row = []
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            mid = (lo + hi) / 2
            i = max(j for j in range(3) if points[j] <= mid)
            row.append(dens[i] * (hi - lo))
        laws.append(row)
    return laws


def _laws_hybrid(eps):
    beta = -mp.expm1(-mp.mpf(eps) / 2) if eps > F.HYBRID_THRESHOLD else mp.mpf(0)
    pm, one = _laws_pm(eps, (-1, 1)), _laws_duchi(eps, (-1, 1))
    return [[beta * m for m in pm[i]] + [(1 - beta) * o for o in one[i]] for i in range(2)]


def _profile(laws, e):
    e = mp.exp(mp.mpf(e))
    return max(
        sum(max(mp.mpf(0), a - e * b) for a, b in zip(p, q, strict=True))
        for p, q in itertools.permutations(laws, 2)
    )


def _epsilon(laws, target):
    lo, hi = mp.mpf(0), mp.mpf(60)
    if _profile(laws, 0) <= target:
        return mp.mpf(0)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _profile(laws, mid) <= target else (mid, hi)
    return hi


def _tradeoff(laws, alpha):
    """Neyman-Pearson tradeoff of the worst pair (min over ordered pairs)."""
    best = mp.mpf(1)
    for p, q in itertools.permutations(laws, 2):  # H0: p, H1: q; reject where q / p is large
        cells = sorted(
            zip(p, q, strict=True), key=lambda c: -(c[1] / c[0]) if c[0] > 0 else -mp.inf
        )
        spent, power = mp.mpf(0), mp.mpf(0)
        for a, b in cells:
            take = min(a, mp.mpf(alpha) - spent) if a > 0 else mp.mpf(0)
            if a == 0:
                power += b
                continue
            power += b * take / a
            spent += take
            if spent >= alpha:
                break
        best = min(best, 1 - power)
    return best


CASES = {
    "ue": (lambda: F.UnaryEncodingEvent(0.6, 0.15), lambda: _laws_ue(0.6, 0.15), 3.0),
    "oue": (lambda: F.oue_event(1.0), lambda: _laws_ue(0.5, 1 / (1 + mp.e)), 1.0),
    "sue": (lambda: F.sue_event(2.0), lambda: _laws_ue(1 / (1 + mp.e**-1), 1 / (1 + mp.e)), 2.0),
    "lh2": (lambda: F.LocalHashingEvent(1.5, 2), lambda: _pair_laws_lh(1.5, 2), 1.5),
    "lh4": (lambda: F.LocalHashingEvent(1.0, 4), lambda: _pair_laws_lh(1.0, 4), 1.0),
    "hr": (lambda: F.HadamardResponseEvent(1.0), lambda: _laws_hr(1.0, 5), 1.0),
    "ss": (lambda: F.SubsetSelectionEvent(1.0, 5, 2), lambda: _laws_ss(1.0, 5, 2), 1.0),
    "duchi": (lambda: F.DuchiEvent(0.8), lambda: _laws_duchi(0.8), 0.8),
    "pm": (lambda: F.PiecewiseEvent(2.0), lambda: _laws_pm(2.0), 2.0),
    "hm": (lambda: F.HybridEvent(2.0), lambda: _laws_hybrid(2.0), 2.0),
    "hm_low": (lambda: F.HybridEvent(0.5), lambda: _laws_hybrid(0.5), 0.5),
}


FAST_FLOAT32 = ("ue", "oue", "lh2", "pm")  # float32 for the others: behind -m slow
PROFILE_CASES = [
    (dtype, name)
    if dtype == "float64" or name in FAST_FLOAT32
    else pytest.param(dtype, name, marks=pytest.mark.slow)
    for dtype in ("float32", "float64")
    for name in sorted(CASES)
]


@pytest.mark.parametrize("dtype,name", PROFILE_CASES)
def test_profile_epsilon_and_tradeoff_match_the_enumeration(dtype, name):
    with jax.enable_x64(dtype == "float64"):
        _check_profile(np.dtype(dtype), name)


def _check_profile(precision, name):
    make, laws_of, eps = CASES[name]
    laws = laws_of()
    event = make()
    tol = 1e-5 if precision == np.float32 else 1e-12
    es = [0.0, 0.1 * eps, 0.5 * eps, 0.95 * eps, eps, 1.5 * eps]
    claims = np.asarray(delta(event, jnp.asarray(es, precision)), np.float64)
    for e, c in zip(es, claims.tolist(), strict=True):
        exact = _profile(laws, float(np.asarray(e, precision)))
        # (the 60-digit enumeration's own rounding is below 1e-45)
        assert c >= exact - 1e-45 and c <= exact * (1 + tol) + tol, (e, c, float(exact))
    for target in (1e-6, 1e-3, 0.05):
        exact = _epsilon(laws, mp.mpf(target))
        claim = float(epsilon(event, target))
        assert claim >= exact - 1e-15 and claim <= exact + 10 * tol * (1 + eps), (target, claim)
    for alpha in (0.01, 0.1, 0.3):
        exact = _tradeoff(laws, alpha)
        claim = float(tradeoff(event, jnp.asarray(alpha, precision)))
        assert claim <= exact + 1e-15 and claim >= exact - 10 * tol, (alpha, claim, exact)


@pytest.mark.parametrize(
    "name", ["ue", *(pytest.param(n, marks=pytest.mark.slow) for n in ("lh2", "hr", "duchi"))]
)
def test_three_uses_through_the_pld_accountant(name):
    make, laws_of, _ = CASES[name]
    laws = laws_of()
    laws = [laws[0], laws[-1]]  # a worst pair (every pair is one here; Duchi's: x = -1, 1)
    product = [[mp.fprod(c) for c in itertools.product(law, repeat=3)] for law in laws]
    with jax.enable_x64(True):
        claim = float(epsilon(SelfComposedEvent(make(), 3), 1e-4))
    exact = _epsilon(product, mp.mpf(1e-4))
    assert claim >= exact
    assert claim <= exact + 0.01  # the PLD grid's discretisation


@pytest.mark.parametrize("eps,g", [(0.5, 2**-2), (1.0, 2**-4), (3.0, 2**-3), (12.0, 2**-2)])
def test_discretised_piecewise_stays_below_its_claim(eps, g):
    a, b, t, w, m, _, _ = pm_integers(eps, g)
    xs = (-1.0, -0.4, 0.3, 1.0)
    scale = 1 + (2**32 - t) / 2**32  # the redraw: every point scaled alike
    laws = [[mp.mpf(v) * scale * t / 2**32 for v in pm_law(eps, g, x)[0]] for x in xs]
    invalid = (1 - mp.mpf(t) / 2**32) ** 2
    laws = [law + [invalid] for law in laws]
    claims = np.asarray(delta(F.PiecewiseEvent(eps), jnp.asarray([0.0, 0.3 * eps, 0.8 * eps])))
    for e, c in zip((0.0, 0.3 * eps, 0.8 * eps), claims.tolist(), strict=True):
        assert _profile(laws, float(np.float32(e))) <= c
    assert mp.log(mp.mpf(a) / b) <= eps  # realised pure epsilon


@pytest.mark.parametrize(
    "make",
    [
        lambda e: F.UnaryEncodingEvent(0.5, 1 / (1 + jnp.exp(e))),
        F.oue_event,
        F.sue_event,
        lambda e: F.LocalHashingEvent(e, 4),
        F.HadamardResponseEvent,
        lambda e: F.SubsetSelectionEvent(e, 10, 3),
        F.DuchiEvent,
        F.PiecewiseEvent,
        F.HybridEvent,
    ],
)
def test_claims_are_differentiable_in_the_budget(make):
    grad = jax.grad(lambda e: epsilon(make(e), 1e-3) + delta(make(e), 0.5))(1.5)
    assert np.isfinite(float(grad)) and float(grad) > 0


@pytest.mark.parametrize(
    "event,name",
    [
        (F.UnaryEncodingEvent(0.2, 0.5), "q must be <= p"),
        (F.UnaryEncodingEvent(0.0, 0.0), "p"),
        (F.LocalHashingEvent(-1.0, 4), "eps"),
        (F.LocalHashingEvent(1.0, 2.5), "g"),
        (F.SubsetSelectionEvent(1.0, 5, 5), "k must be in"),
        (F.HadamardResponseEvent(float("nan")), "eps"),
    ],
)
def test_concrete_bad_parameters_raise(event, name):
    with pytest.raises(ValueError, match=name):
        epsilon(event, 1e-5)


def test_traced_bad_parameters_give_nan():
    bad = jax.jit(lambda e: delta(F.SubsetSelectionEvent(e, 5, 2), 0.5))(-1.0)
    assert np.isnan(float(bad))
    bad = jax.jit(lambda q: epsilon(F.UnaryEncodingEvent(0.3, q), 1e-3))(0.5)
    assert np.isnan(float(bad))
    grad = jax.grad(lambda e: epsilon(F.DuchiEvent(e), 1e-3))(-1.0)
    assert np.isnan(float(grad))
