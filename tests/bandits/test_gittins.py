"""Gittins-index table against an independent brute-force dynamic programme."""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest
from scipy.optimize import brentq

from ldpjax import bandits


def brute_force_index(a: float, b: float, discount: float, depth: int) -> float:
    """Calibration by memoised recursion on the Beta(a, b) tree and brentq on the price.

    V(a, b, k) = max(lambda / (1 - d), mu + d [mu V(a+1, b, k+1) + (1 - mu) V(a, b+1, k+1)]),
    frozen at depth ``depth`` as max(lambda, mu) / (1 - d); the index is the lambda at which
    the root state is indifferent between continuing and retiring.
    """
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def advantage(lam):
        retire = lam / (1 - discount)

        @functools.cache
        def value(x, y, k):
            mu = x / (x + y)
            if k == depth:
                return max(retire, mu / (1 - discount))
            cont = mu + discount * (mu * value(x + 1, y, k + 1) + (1 - mu) * value(x, y + 1, k + 1))
            return max(retire, cont)

        mu = a / (a + b)
        return mu + discount * (mu * value(a + 1, b, 1) + (1 - mu) * value(a, b + 1, 1)) - retire

    return brentq(advantage, 1e-9, 1 - 1e-9, xtol=1e-13)


@pytest.fixture(scope="module")
def table_09():
    return bandits.gittins_table(6, 0.9, num_prices=512)


@pytest.mark.parametrize("s, f", [(0, 0), (1, 0), (0, 1), (2, 3), (5, 1), (0, 6), (3, 3)])
def test_table_matches_brute_force(table_09, s, f):
    # depth 160: 0.9^160 = 5e-8 of the value is frozen, far below the tolerance
    exact = brute_force_index(1.0 + s, 1.0 + f, 0.9, 160)
    # the table's own certified interpolation bound, plus its truncation (0.9^66 ~ 1e-3 of the
    # value frozen at a concentrated posterior; measured effect < 1e-6)
    assert abs(table_09.index[s, f] - exact) <= table_09.interpolation_error + 1e-6
    assert table_09.index[s, f] >= (1 + s) / (2 + s + f)  # index >= posterior mean


def test_known_value_and_structure(table_09):
    # Gittins' tables (Bernoulli, uniform prior, discount 0.9): nu(1, 1) = 0.7029
    assert table_09.index[0, 0] == pytest.approx(0.7029, abs=1e-4)
    idx = table_09.index
    n = idx.shape[0]
    for s in range(n - 1):
        for f in range(n - 1 - s):
            if s + f + 1 < n:
                assert idx[s + 1, f] > idx[s, f]  # a success raises the index
                assert idx[s, f + 1] < idx[s, f]  # a failure lowers it
    assert np.isnan(idx[n - 1, 1])  # outside the table


def test_prior_and_discount_change_the_table():
    t1 = bandits.gittins_table(3, 0.9, prior=(2.0, 1.0), num_prices=512)
    exact = brute_force_index(2.0, 1.0, 0.9, 160)
    assert abs(t1.index[0, 0] - exact) <= t1.interpolation_error + 1e-6
    t2 = bandits.gittins_table(3, 0.95, num_prices=512)
    assert abs(t2.index[1, 1] - brute_force_index(2.0, 2.0, 0.95, 300)) <= (
        t2.interpolation_error + 1e-6)


def test_extrapolation_beyond_the_table():
    small = bandits.gittins_table(40, 0.9, num_prices=512)
    large = bandits.gittins_table(80, 0.9, num_prices=512)
    s = np.arange(0, 61)
    f = 60 - s
    ext = np.asarray(bandits.gittins_index(small, s, f))
    mean = (1 + s) / 62
    true = large.index[s, f]
    # inside the table the lookup is exact; at the edge the extrapolation is continuous
    inside = np.asarray(bandits.gittins_index(small, np.arange(41), 40 - np.arange(41)))
    assert np.allclose(inside, small.index[np.arange(41), 40 - np.arange(41)], atol=1e-6)
    # beyond it the 1/n bonus extrapolation keeps the bonus within 40% and the index within
    # 2e-3 of the table that covers n = 60 (the bonus itself is ~1e-2 here)
    assert np.all(np.abs(ext - true) <= 2e-3)
    assert np.all(np.abs((ext - mean) - (true - mean)) <= 0.4 * (true - mean))


@pytest.mark.parametrize("call, name", [
    (lambda: bandits.gittins_table(-1, 0.9), "max_count"),
    (lambda: bandits.gittins_table(5, 1.0), "discount"),
    (lambda: bandits.gittins_table(5, 0.9, prior=(0.0, 1.0)), "prior"),
    (lambda: bandits.gittins_table(5, 0.9, num_prices=4), "num_prices"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
