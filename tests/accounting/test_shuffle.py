"""Amplification by shuffling (ldpjax.accounting.shuffle) against independent references.

References, none of them ldpjax code:

* ``paper_epsilon`` (:mod:`ldpjax_experiments.bench.shuffle_reference`, also the bench's
  reference): the per-point computation of Feldman, McMillan & Talwar (FOCS 2021, Theorem 3.2
  and its numerical procedure), in NumPy/SciPy float64 from the paper's description: the pair
  P_c, Q_c of counts given C = c clones, both hockey-stick divergences from binomial cdfs, a
  sum over c in blocks of ``step`` values (upper and lower bounds) and a bisection over eps,
  returning the lower and upper ends. With step = 1 the two bounds enclose the pair's exact
  epsilon to the bisection's resolution.
* the exact privacy of shuffled binary and 3-ary randomized response for small n, by
  enumerating the histogram of reports (every composition of the other users' records);
* the eps0-DP profile (e^eps0 - e^eps) / (1 + e^eps0) for n = 1 (no other users);
* the authors' published output for n = 1e5, eps0 = 4, delta = 1e-6 (their repository's
  README, ``apple/ml-shuffling-amplification``): 0.16754 <= eps <= 0.17279 numerically, and
  0.5378040242374512 for the closed form.
"""

from __future__ import annotations

import itertools
import math

import jax
import numpy as np
import pytest

from ldpjax.accounting import accountant as A
from ldpjax.accounting import composition as Comp
from ldpjax.accounting import events as E
from ldpjax.accounting import shuffle as S
from ldpjax_experiments.bench.shuffle_reference import paper_epsilon

DELTA = 1e-6
GRID = [(n, e0) for n in (1_000, 10_000, 100_000) for e0 in (0.5, 1.0, 2.0, 4.0)]
FAST_POINTS = [(1_000, 1.0), (10_000, 2.0), (100_000, 4.0)]
# Above the exact (step 1) reference's upper end ldpjax may lie by its blocks' slack; measured
# at most 0.05% on GRID with 256 blocks (float32 and float64), allowed 0.5%.
BLOCK_SLACK = 5e-3


# --------------------------------------------------------------------------- exact small cases
def _shuffled_rr_delta(n: int, k: int, eps0: float, eps: np.ndarray) -> np.ndarray:
    """Exact delta(eps) of n shuffled k-ary randomized-response reports, the worst case over
    the other users' records (user 1 holds category 0 or 1), by enumerating histograms."""
    keep = math.exp(eps0) / (math.exp(eps0) + k - 1.0)
    other = 1.0 / (math.exp(eps0) + k - 1.0)

    def law(category):
        row = np.full(k, other)
        row[category] = keep
        return row

    def histogram_law(records):  # dict: histogram tuple -> probability
        out = {(0,) * k: 1.0}
        for record in records:
            row = law(record)
            nxt: dict = {}
            for hist, prob in out.items():
                for j in range(k):
                    h = list(hist)
                    h[j] += 1
                    key = tuple(h)
                    nxt[key] = nxt.get(key, 0.0) + prob * row[j]
            out = nxt
        return out

    worst = np.zeros_like(eps)
    for composition in itertools.combinations_with_replacement(range(k), n - 1):
        p0 = histogram_law((0,) + composition)
        p1 = histogram_law((1,) + composition)
        keys = sorted(set(p0) | set(p1))
        a = np.array([p0.get(h, 0.0) for h in keys])
        b = np.array([p1.get(h, 0.0) for h in keys])
        w = np.exp(eps)[:, None]
        d = np.maximum(np.sum(np.maximum(a - w * b, 0.0), -1), np.sum(np.maximum(b - w * a, 0.0), -1))
        worst = np.maximum(worst, d)
    return worst


# --------------------------------------------------------------------------- fixtures
E0 = np.array([0.5, 1.0, 2.0, 4.0])
NS = np.array([1_000, 10_000, 100_000])


def _cell(point):
    return NS.tolist().index(point[0]), E0.tolist().index(point[1])


@pytest.fixture(scope="module")
def grid32():
    """ldpjax's bound on GRID (float32): broadcast (3, 1) x (1, 4), one compiled call; the
    event through the accountant, the plain function and the closed form."""
    e0, ns = E0[None, :].astype(np.float32), NS[:, None]
    event = A.epsilon(S.ShuffledEvent(e0, ns), DELTA)
    return {"event": np.asarray(event),
            "plain": np.asarray(S.shuffle_epsilon(e0, ns, DELTA)),
            "closed": np.asarray(S.shuffle_epsilon_closed_form(e0, ns, DELTA))}


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("point", FAST_POINTS)
def test_within_the_paper_algorithm_bounds(grid32, point):
    lower, upper = paper_epsilon(*point, DELTA)
    ours = grid32["event"][_cell(point)]
    assert lower <= ours <= upper * (1.0 + BLOCK_SLACK)


def test_the_published_point_and_the_event(grid32):
    assert grid32["event"].shape == (3, 4) and grid32["event"].dtype == np.float32
    np.testing.assert_array_equal(grid32["event"], grid32["plain"])
    ours = float(grid32["event"][_cell((100_000, 4.0))])
    assert 0.16754 <= ours <= 0.17279  # the authors' published numerical interval
    assert float(grid32["closed"][_cell((100_000, 4.0))]) == pytest.approx(
        0.5378040242374512, rel=1e-6)  # their published closed form


def test_closed_form_is_never_below_the_numerical_bound(grid32):
    assert np.all(grid32["closed"] >= grid32["event"])
    assert np.all(grid32["event"] <= E0[None, :])  # never above eps0


def test_one_report_and_shuffled_randomized_response():
    # n = 1: C = 0, the pair is eps0-randomized response: delta = (e^eps0 - e^eps)/(1 + e^eps0)
    eps0 = np.array([0.5, 1.5, 3.0])[:, None]
    eps = np.array([0.05, 0.2, 0.5, 1.0])[None, :]
    alone = np.asarray(S.shuffle_delta(eps0, 1, eps))
    exact = np.maximum((np.exp(eps0) - np.exp(eps)) / (1.0 + np.exp(eps0)), 0.0)
    # above, by at most the documented rounding allowance (8 + 64 ulps, relative)
    assert np.all(alone >= exact) and np.allclose(alone, exact, rtol=2e-5, atol=0)
    # n = 40 binary RR: the bound is at least the exact delta, with either clone probability
    exact = np.stack([_shuffled_rr_delta(40, 2, float(e), eps[0]) for e in eps0[:, 0]])
    generic = np.asarray(S.shuffle_delta(eps0, 40, eps))
    stronger = np.asarray(S.shuffle_delta(eps0, 40, eps, randomizer="randomized_response"))
    # (the enumeration's float64 rounding leaves up to 1e-24 where the exact delta is 0)
    assert np.all(stronger >= exact - 1e-15) and np.all(generic >= stronger)
    assert np.max(exact / np.maximum(stronger, 1e-30)) > 0.6  # a close bound, not a vacuous one


def test_traced_and_concrete_invalid_inputs(grid32):
    with pytest.raises(ValueError, match="eps0 must be in"):
        S.shuffle_epsilon(-1.0, 100, DELTA)
    with pytest.raises(ValueError, match="n must be an integer in"):
        S.shuffle_epsilon(1.0, 2.5, DELTA)
    with pytest.raises(ValueError, match="delta must be in"):
        S.shuffle_epsilon(1.0, 100, 1.0)
    with pytest.raises(ValueError, match="randomizer"):
        S.shuffle_epsilon(1.0, 100, DELTA, randomizer="laplace")
    with pytest.raises(ValueError, match="eps0 must be in"):
        A.epsilon(S.ShuffledEvent(-1.0, 100), DELTA)
    with pytest.raises(NotImplementedError):  # no composition that drops the amplification
        A.epsilon(Comp.ComposedEvent((S.ShuffledEvent(1.0, 100), E.LaplaceEvent(1.0))), DELTA)
    # traced: NaN for the invalid entries (eps0 = -1 in the first column, n = 1000.5 in the
    # first row), the rest as if alone; edge budgets: eps0 = 0 gives 0, eps0 = inf gives inf,
    # and eps0 = 100 (e^eps0 overflows float32) about eps0 - 1e-6, no amplification: the
    # clones have probability e^-100
    e0 = np.array([[-1.0, 0.0, np.inf, 100.0]], np.float32)
    ns = np.array([[1_000.5], [7.0], [100_000.0]], np.float32)
    out = np.asarray(jax.jit(lambda e, n: A.epsilon(S.ShuffledEvent(e, n), DELTA))(e0, ns))
    assert np.all(np.isnan(out[:, 0])) and np.all(np.isnan(out[0]))
    assert np.all(out[1:, 1] == 0.0) and np.all(out[1:, 2] == np.inf)
    np.testing.assert_allclose(out[1:, 3], 100.0, rtol=1e-6)


def test_gradient_matches_finite_differences(x64):
    eps0 = np.array([0.7, 2.0, 3.0])
    ns = np.array([10_000, 1_000, 100_000])
    h = 1e-5
    # one reverse pass over a broadcast array (each eps depends on its own eps0 only), the
    # values at eps0 +- h from the same call
    def total(e0, n):
        eps = S.shuffle_epsilon(e0, n, DELTA)
        return eps.sum(), eps

    grads, values = jax.jit(jax.grad(total, has_aux=True))(
        np.concatenate([eps0 + h, eps0 - h, eps0]), np.concatenate([ns, ns, ns]))
    fd = (np.asarray(values[:3]) - np.asarray(values[3:6])) / (2 * h)
    # central differences of a float64 root: O(h^2) truncation, root noise ~1e-15 / h
    np.testing.assert_allclose(np.asarray(grads[6:]), fd, rtol=1e-4)
    assert np.all(np.asarray(grads[6:]) > 0)


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_whole_grid_within_the_paper_algorithm_bounds(precision):
    with jax.enable_x64(precision == "float64"):
        e0, ns = E0[None, :], NS[:, None]
        ours = np.asarray(S.shuffle_epsilon(e0, ns, DELTA))
        lower_bound = np.asarray(S.shuffle_epsilon(e0, ns, DELTA, bound="lower"))
        closed = np.asarray(S.shuffle_epsilon_closed_form(e0, ns, DELTA))
        safe = np.asarray(S.shuffle_delta(e0, ns, ours))
    # the returned eps is on the safe side of the bound (re-evaluated: its rounding, relative)
    assert np.all(safe <= DELTA * (1.0 + (1e-5 if precision == "float32" else 1e-12)))
    assert np.all(closed >= ours)
    for point in GRID:
        lower, upper = paper_epsilon(*point, DELTA)
        # the reference's own float64 rounding (its cdf differences cancel) is about 1e-12,
        # relative: at (1e4, 4) 40-digit mpmath puts the exact eps below both ends
        assert lower * (1.0 - 1e-9) <= ours[_cell(point)] <= upper * (1.0 + BLOCK_SLACK), point
        # ldpjax's lower bound is below the pair's exact epsilon (float32: its rounding)
        assert lower_bound[_cell(point)] <= upper * (1.0 + 1e-5), point


def _mp_pair_delta(n: int, eps0: float, eps: float, digits: int = 40) -> float:
    """The pair's delta(eps), every term summed in mpmath (``digits`` digits)."""
    import mpmath as mp

    with mp.workdps(digits):
        p, w = mp.e ** (-mp.mpf(eps0)), mp.e ** mp.mpf(eps)
        alpha = mp.e ** mp.mpf(eps0) / (mp.e ** mp.mpf(eps0) + 1)
        sd = math.sqrt((n - 1) * float(p) * (1 - float(p)))
        lo = max(0, int((n - 1) * float(p) - 12 * sd))
        hi = min(n - 1, int((n - 1) * float(p) + 12 * sd))
        total = mp.mpf(0)
        for c in range(lo, hi + 1):
            b = [mp.binomial(c, k) / mp.mpf(2) ** c for k in range(c + 1)] + [mp.mpf(0)]
            d_c = mp.fsum(max(mp.mpf(0), alpha * b[k - 1] + (1 - alpha) * b[k]
                              - w * ((1 - alpha) * b[k - 1] + alpha * b[k]))
                          for k in range(1, c + 2))
            d_c += max(mp.mpf(0), (1 - alpha) * b[0] - w * alpha * b[0])
            total += mp.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c) * d_c
        return float(total)


@pytest.mark.slow
def test_safe_against_exact_arithmetic(x64):
    # the returned eps has delta <= 1e-6 in 40-digit arithmetic, and sits close to the crossing
    eps = float(S.shuffle_epsilon(2.0, 1_000, DELTA))
    assert _mp_pair_delta(1_000, 2.0, eps) <= DELTA
    assert _mp_pair_delta(1_000, 2.0, eps * (1 - 1e-9)) > DELTA


@pytest.mark.slow
def test_stronger_clones_within_their_reference():
    # randomizer="randomized_response": the same pair with clone probability 2 / (e^eps0 + 1)
    ours = np.asarray(S.shuffle_epsilon(E0[None, :], NS[:, None], DELTA,
                                        randomizer="randomized_response"))
    for n, e0 in GRID:
        lower, upper = paper_epsilon(n, e0, DELTA, clone_prob=2.0 / (math.exp(e0) + 1.0))
        # the reference's own float64 rounding (about 1e-12, relative; seen under x64)
        assert lower * (1.0 - 1e-9) <= ours[_cell((n, e0))] <= upper * (1.0 + BLOCK_SLACK), (n, e0)


@pytest.mark.slow
def test_shuffled_three_ary_randomized_response(x64):
    eps0 = np.array([0.5, 1.5, 3.0])[:, None]
    eps = np.array([0.05, 0.2, 0.5, 1.0])[None, :]
    exact = np.stack([_shuffled_rr_delta(9, 3, float(e), eps[0]) for e in eps0[:, 0]])
    stronger = np.asarray(S.shuffle_delta(eps0, 9, eps, randomizer="randomized_response"))
    assert np.all(stronger >= exact - 1e-15)


@pytest.mark.slow
def test_float32_agrees_with_float64():
    e0, ns = E0[None, :], NS[:, None]
    f32 = np.asarray(S.shuffle_epsilon(e0.astype(np.float32), ns, DELTA))
    with jax.enable_x64(True):
        f64 = np.asarray(S.shuffle_epsilon(e0, ns, DELTA))
    # float32's rounding allowance keeps it within 2e-5 of float64, relative
    np.testing.assert_allclose(f32, f64, rtol=2e-5)
