"""Hadamard response: the matrix, the exact uniformity of the real path, the law, an audit.

The sets C_x are checked against a Sylvester matrix built with ``numpy.kron``; the fast
transform and the support counts against the explicit matrix; the two-to-one map of the real
path against an enumeration of every value of its index word (each index of the chosen side
is hit exactly twice: exactly uniform); the side word's count against 60-digit mpmath (its
realised epsilon never exceeds the claim); the law of the report by chi-square at 1e-6; an
empirical epsilon by Clopper-Pearson.
"""

from __future__ import annotations

import importlib
import math

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax.accounting.accountant import epsilon
from ldpjax.accounting.frequency_events import HadamardResponseEvent
from ldpjax.mechanisms import no_privacy_permitted
from ldpjax.mechanisms.unary_encoding import other_bit_words
from tests.mechanisms.oracle_checks import audit_epsilon, chi_square_ok

# by module: the package exports a function of the same name
hr = importlib.import_module("ldpjax.mechanisms.hadamard_response")

KEY = jax.random.key(31)


@pytest.fixture(autouse=True)
def _digits():
    """60-digit mpmath for this module's tests only (mp.mp.dps is global to the process)."""
    with mp.workdps(60):
        yield


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    with jax.enable_x64(request.param == "float64"):
        yield np.dtype(request.param)


def _sylvester(k: int) -> np.ndarray:
    h = np.array([[1]])
    while h.shape[0] < k:
        h = np.kron(np.array([[1, 1], [1, -1]]), h)
    return h


def test_row_sets_are_the_sylvester_rows():
    k = 16
    h = _sylvester(k)
    inside = np.asarray(hr.in_row_set(jnp.arange(k - 1)[:, None], jnp.arange(k)[None, :]))
    np.testing.assert_array_equal(inside, h[1:] == 1)
    overlap = inside.astype(int) @ inside.T.astype(int)
    assert np.all(overlap[~np.eye(k - 1, dtype=bool)] == k // 4)  # |C_x & C_x'| = K / 4
    assert np.all(np.diag(overlap) == k // 2)


def test_fast_transform_and_support_counts():
    k = 32
    x = np.random.default_rng(0).integers(0, 9, k).astype(np.float32)
    np.testing.assert_allclose(np.asarray(hr.walsh_hadamard(jnp.asarray(x))), _sylvester(k) @ x)
    reports = np.random.default_rng(1).integers(0, 16, 500)
    d = 11
    brute = [int(np.sum(_sylvester(16)[v + 1, reports] == 1)) for v in range(d)]
    assert np.asarray(hr.hadamard_support(jnp.asarray(reports), d)).tolist() == brute


@pytest.mark.parametrize("d,item", [(3, 0), (7, 5), (12, 11)])
def test_each_side_is_exactly_uniform(d, item):
    k = hr.hadamard_size(d)
    shift = 32 - int(math.log2(k))
    j0 = jnp.arange(k, dtype=jnp.uint32) << shift  # every value of the index word's top bits
    h = _sylvester(k)[item + 1]
    for side_word, side in ((2**32 - 1, 1), (0, -1)):  # w0 >= T: C_x; w0 < T: its complement
        words = jnp.stack([jnp.full(k, side_word, jnp.uint32), j0], -1)
        out = np.asarray(hr.hadamard_response_from_bits(words, item, 1.0, d))
        counts = np.bincount(out, minlength=k)
        assert np.all(counts[h == side] == 2) and np.all(counts[h != side] == 0)


def test_side_word_realises_at_most_the_claim(precision):
    eps = np.array([1e-6, 0.1, 1.0, 3.0, 10.0, 21.0], precision)
    words = np.asarray(other_bit_words(jnp.asarray(eps)))
    claims = np.asarray(epsilon(HadamardResponseEvent(jnp.asarray(eps)), 0.0), np.float64)
    for e, t, c in zip(eps.tolist(), words.tolist(), claims.tolist(), strict=True):
        exact = min(int(mp.ceil(mp.mpf(2**32) / (mp.exp(mp.mpf(e)) + 1))), 2**31)
        assert exact <= t <= exact + 1  # one word more only within the double-word error
        assert mp.log(mp.mpf(2**32 - t) / t) <= mp.mpf(e) <= mp.mpf(c)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_law_of_a_report(eps):
    d, item, n = 6, 4, 60_000
    k = hr.hadamard_size(d)
    out = jax.jit(hr.hadamard_response, static_argnums=3)(KEY, jnp.full(n, item), eps, d)
    h = _sylvester(k)[item + 1]
    probs = np.where(h == 1, 2 * math.exp(eps), 2.0) / (k * (math.exp(eps) + 1))
    ok, stat, bound = chi_square_ok(np.bincount(np.asarray(out), minlength=k), probs)
    assert ok, (stat, bound)


def test_audit_hadamard_response():
    d, n, eps = 5, 100_000, 1.0
    k = hr.hadamard_size(d)
    release = jax.jit(hr.hadamard_response, static_argnums=3)
    k0, k1 = jax.random.split(jax.random.key(9))
    out0 = np.asarray(release(k0, jnp.zeros(n, jnp.int32), eps, d))
    out1 = np.asarray(release(k1, jnp.ones(n, jnp.int32), eps, d))
    hits0 = list(np.bincount(out0, minlength=k))
    hits1 = list(np.bincount(out1, minlength=k))
    c0, c1 = _sylvester(k)[1] == 1, _sylvester(k)[2] == 1
    region = c0 & ~c1  # the K/4 indices only item 0 favours
    hits0.append(int(np.sum(region[out0])))
    hits1.append(int(np.sum(region[out1])))
    eps_low = audit_epsilon(hits0, hits1, n)
    claim = float(epsilon(HadamardResponseEvent(eps), 0.0))
    assert eps_low <= claim
    assert eps_low > 0.8 * claim


# --------------------------------------------------------------------------- fail closed, jit
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: hr.hadamard_response(KEY, 1, -1.0, 5), "eps"),
        (lambda: hr.hadamard_response(KEY, 1, float("nan"), 5), "eps"),
        (lambda: hr.hadamard_response(KEY, 5, 1.0, 5), "item"),
        (lambda: hr.hadamard_response(KEY, 0, 1.0, 1), "d"),
        (lambda: hr.hadamard_response(KEY, 0, jnp.bfloat16(1.0), 5), "bfloat16"),
    ],
)
def test_concrete_bad_arguments_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_traced_bad_arguments_report_minus_one():
    release = jax.jit(hr.hadamard_response, static_argnums=3)
    for eps in (-1.0, float("nan"), float("inf")):
        assert np.asarray(release(KEY, jnp.array([0, 4]), eps, 5)).tolist() == [-1, -1]
    assert np.asarray(release(KEY, jnp.array([5, -1, 2]), 1.0, 5))[:2].tolist() == [-1, -1]
    with no_privacy_permitted():
        out = np.asarray(release(KEY, jnp.full(200, 2), float("inf"), 5))
    assert np.all(_sylvester(8)[3][out] == 1)  # no privacy: always inside C_2


def test_jits_with_literal_and_traced_budget(precision):
    items = jnp.array([0, 4, 2])
    release = lambda k, b: hr.hadamard_response(k, items, b, 5)  # noqa: E731
    literal = np.asarray(jax.jit(lambda k: release(k, 1.3))(KEY))
    traced = np.asarray(jax.jit(release)(KEY, jnp.asarray(1.3, precision)))
    assert np.all((literal >= 0) & (literal < 8))
    np.testing.assert_array_equal(literal, traced)
