"""Subset selection: the exact coin, the key ranking, ties, the law over all subsets, an audit.

The word count of the coin is checked against 60-digit mpmath (the exact ceiling of
2^32 (d - k) / (d + k (e^eps - 1)), one word more only within the double-word error) and its
realised likelihood ratio against e^eps; the members against an explicit ranking of the keys;
a tie makes the report invalid whatever the input; the law of the report over all C(d, k)
subsets by chi-square at 1e-6; an empirical epsilon by Clopper-Pearson; the optimal k against
a brute-force minimum of the variance.
"""

from __future__ import annotations

import importlib
import itertools
import math

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax.accounting.accountant import epsilon
from ldpjax.accounting.frequency_events import SubsetSelectionEvent
from ldpjax.mechanisms import no_privacy_permitted
from tests.mechanisms.oracle_checks import audit_epsilon, chi_square_ok

# by module: the package exports a function of the same name
ss = importlib.import_module("ldpjax.mechanisms.subset_selection")

KEY = jax.random.key(41)
TWO32 = 2**32


@pytest.fixture(autouse=True)
def _digits():
    """60-digit mpmath for this module's tests only (mp.mp.dps is global to the process)."""
    with mp.workdps(60):
        yield


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    with jax.enable_x64(request.param == "float64"):
        yield np.dtype(request.param)


@pytest.mark.parametrize("d,k", [(2, 1), (5, 2), (30, 7), (1000, 300)])
def test_coin_words_are_exact_and_realise_at_most_the_claim(precision, d, k):
    eps = np.array([0.0, 1e-5, 0.3, 1.0, 4.0, 15.0], precision)
    words = np.asarray(ss.out_words(jnp.asarray(eps), d, k))
    slack = 2.0**-9 if precision == np.float32 else 2.0**-40
    for e, t in zip(eps.tolist(), words.tolist(), strict=True):
        y = mp.mpf(TWO32) * (d - k) / (d + k * mp.expm1(mp.mpf(e)))
        exact = int(mp.ceil(y))
        assert exact <= t <= exact + 1, (e, t, exact)
        if t == exact + 1:
            assert exact - y < slack
        # x in S with (2^32 - T) words: ratio ((2^32 - T) / T) (d - k) / k <= e^eps
        assert mp.mpf(TWO32 - t) * (d - k) / (mp.mpf(t) * k) <= mp.exp(mp.mpf(e))


def test_members_are_the_smallest_keys_and_ties_are_invalid():
    d, k = 6, 3
    keys = np.array([[0, 50], [0, 10], [1, 0], [0, 30], [0, 20], [0, 40]], np.uint32)
    # items by (high, low) key: 1, 4, 3, 5, 0, 2
    words = jnp.asarray(np.concatenate([[2**32 - 1], keys.ravel()]).astype(np.uint32))
    inside = np.asarray(ss.subset_selection_from_bits(words, 0, 1.0, d, k))
    assert inside.tolist() == [1, 1, 0, 0, 1, 0]  # 0, then the 2 smallest others: 1, 4
    out = np.asarray(ss.subset_selection_from_bits(words.at[0].set(0), 1, 1.0, d, k))
    assert out.tolist() == [0, 0, 0, 1, 1, 1]  # 1 left out: the 3 smallest others 4, 3, 5
    tied = keys.copy()
    tied[5] = tied[2]
    words = jnp.asarray(np.concatenate([[2**32 - 1], tied.ravel()]).astype(np.uint32))
    for item in range(d):
        assert (
            np.asarray(ss.subset_selection_from_bits(words, item, 1.0, d, k)).tolist() == [-1] * d
        )


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_law_over_all_subsets(eps):
    d, k, item, n = 5, 2, 3, 60_000
    out = np.asarray(
        jax.jit(ss.subset_selection, static_argnums=(3, 4))(KEY, jnp.full(n, item), eps, d, k)
    )
    assert np.all(out.sum(-1) == k)
    subsets = list(itertools.combinations(range(d), k))
    codes = (out.astype(np.int64) * 2 ** np.arange(d)).sum(-1)
    counts = [int(np.sum(codes == sum(2**i for i in s))) for s in subsets]
    z = math.comb(d - 1, k - 1) * math.exp(eps) + math.comb(d - 1, k)
    probs = [(math.exp(eps) if item in s else 1.0) / z for s in subsets]
    ok, stat, bound = chi_square_ok(counts, probs)
    assert ok, (stat, bound)


def test_audit_subset_selection():
    d, k, n, eps = 6, 2, 100_000, 1.0
    release = jax.jit(ss.subset_selection, static_argnums=(3, 4))
    k0, k1 = jax.random.split(jax.random.key(13))
    out0 = np.asarray(release(k0, jnp.zeros(n, jnp.int32), eps, d, k))
    out1 = np.asarray(release(k1, jnp.ones(n, jnp.int32), eps, d, k))
    events = [
        lambda o: (o[:, 0] == 1) & (o[:, 1] == 0),
        lambda o: (o[:, 0] == 0) & (o[:, 1] == 1),
        lambda o: o[:, 0] == 1,
    ]
    hits0 = [int(np.sum(e(out0))) for e in events]
    hits1 = [int(np.sum(e(out1))) for e in events]
    eps_low = audit_epsilon(hits0, hits1, n)
    claim = float(epsilon(SubsetSelectionEvent(eps, d, k), 0.0))
    assert eps_low <= claim
    assert eps_low > 0.8 * claim


def test_subset_size_minimises_the_variance():
    for d in (2, 5, 17, 100):
        for eps in (0.1, 0.7, 1.0, 2.5, 6.0):
            best = min(range(1, d), key=lambda k: ss.subset_variance_factor(eps, d, k))
            chosen = ss.subset_size(eps, d)
            assert ss.subset_variance_factor(eps, d, chosen) <= ss.subset_variance_factor(
                eps, d, best
            ) * (1 + 1e-12)


# --------------------------------------------------------------------------- fail closed, jit
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: ss.subset_selection(KEY, 1, -1.0, 5, 2), "eps"),
        (lambda: ss.subset_selection(KEY, 1, float("nan"), 5, 2), "eps"),
        (lambda: ss.subset_selection(KEY, 5, 1.0, 5, 2), "item"),
        (lambda: ss.subset_selection(KEY, 1, 1.0, 5, 5), "k"),
        (lambda: ss.subset_selection(KEY, 1, 1.0, 5, 0), "k"),
        (lambda: ss.subset_selection(KEY, 1, jnp.float16(1.0), 5, 2), "float16"),
    ],
)
def test_concrete_bad_arguments_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_traced_bad_arguments_give_the_invalid_report():
    release = jax.jit(ss.subset_selection, static_argnums=(3, 4))
    for eps in (-1.0, float("nan"), float("inf")):  # one shape: one compilation
        assert np.asarray(release(KEY, jnp.array([2, 1]), eps, 4, 2)).tolist() == [[-1] * 4] * 2
    assert np.asarray(release(KEY, jnp.array([4, -1]), 1.0, 4, 2)).tolist() == [[-1] * 4] * 2
    with no_privacy_permitted():
        out = np.asarray(release(KEY, jnp.array([2, 2]), float("inf"), 4, 2))
    assert np.all(out[:, 2] == 1)  # no privacy: the item is always in the subset


def test_jits_with_literal_and_traced_budget(precision):
    items = jnp.array([0, 9, 4])
    release = lambda k, b: ss.subset_selection(k, items, b, 10, 3)  # noqa: E731
    literal = np.asarray(jax.jit(lambda k: release(k, 1.3))(KEY))
    traced = np.asarray(jax.jit(release)(KEY, jnp.asarray(1.3, precision)))
    assert np.all(literal.sum(-1) == 3)
    np.testing.assert_array_equal(literal, traced)
