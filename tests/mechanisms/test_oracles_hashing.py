"""Local hashing (BLH, OLH): the public hash family, the law, an audit, fail-closed, jit.

The hash is checked against a plain-Python reference (XOR of the seed words of the item's set
bits, then floor(u g / 2^32) in exact integers), and the family's documented properties are
checked from exact integer counts: every bucket within 2^-32 of 1/g and two distinct items
colliding with probability in [1/g, 1/g + g 2^-64] (the profile ``LocalHashingEvent`` uses
1/g, so a family that collides *less* would break the claim). The report given the hash is
K-ary randomized response of the bucket (chi-square at 1e-6), and an auditor who sees the
public seed reaches most of the claimed epsilon without exceeding it.
"""

from __future__ import annotations

import importlib
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.accounting.accountant import epsilon
from ldpjax.accounting.frequency_events import LocalHashingEvent
from ldpjax.mechanisms import no_privacy_permitted
from tests.mechanisms.oracle_checks import audit_epsilon, chi_square_ok

# by module: the package exports a function of the same name
lh = importlib.import_module("ldpjax.mechanisms.local_hashing")

KEY = jax.random.key(21)
TWO32 = 2**32


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    with jax.enable_x64(request.param == "float64"):
        yield np.dtype(request.param)


def _reference_bucket(seed: list[int], item: int, g: int) -> int:
    u = seed[0]
    for i in range(len(seed) - 1):
        if (item >> i) & 1:
            u ^= seed[i + 1]
    return (u * g) >> 32


@pytest.mark.parametrize("g", [2, 3, 4, 7, 1000, 65535])
def test_hash_matches_the_reference(g):
    d = 37
    seeds = lh.local_hash_seeds(jax.random.key(g), (50,), d)
    buckets = np.asarray(lh.local_hash(seeds[:, None, :], jnp.arange(d), g))
    for s, row in zip(np.asarray(seeds).tolist(), buckets.tolist(), strict=True):
        assert row == [_reference_bucket(s, x, g) for x in range(d)]


@pytest.mark.parametrize("g", [2, 3, 4, 5, 7, 12, 1000, 65535])
def test_family_is_uniform_and_collides_at_least_one_in_g(g):
    # words per bucket of floor(u g / 2^32): n_j = ceil((j + 1) 2^32 / g) - ceil(j 2^32 / g)
    words = [-((-(j + 1) * TWO32) // g) + ((-j * TWO32) // g) for j in range(g)]
    assert sum(words) == TWO32
    assert all(abs(n * g - TWO32) < g for n in words)  # each bucket within 2^-32 of 1/g
    # u(x), u(x') are independent uniform words for x != x', so they collide with probability
    # sum_j (n_j / 2^32)^2, exactly, in rationals
    collide = sum(n * n for n in words)
    assert collide * g >= TWO32**2  # >= 1/g: the claim's collision probability holds
    assert collide * g - TWO32**2 <= g * g  # <= 1/g + g 2^-64
    if g & (g - 1) == 0:
        assert collide * g == TWO32**2


def test_pair_collision_frequency_is_one_in_g():
    g, n = 3, 200_000
    seeds = lh.local_hash_seeds(jax.random.key(3), (n,), 16)
    b = np.asarray(lh.local_hash(seeds[:, None, :], jnp.array([5, 10]), g))
    hits = int(np.sum(b[:, 0] == b[:, 1]))
    sd = math.sqrt(n * (1 / g) * (1 - 1 / g))
    assert abs(hits - n / g) <= 5.3 * sd  # two-sided 1e-7


def test_report_given_the_hash_is_kary_randomized_response():
    d, g, eps, n = 10, 4, 1.0, 40_000
    seed = lh.local_hash_seeds(jax.random.key(8), (1,), d)
    bucket = int(lh.local_hash(seed[0], 6, g))
    release = jax.jit(lh.local_hashing, static_argnums=(4, 5))
    reports = release(KEY, jnp.full(n, 6), jnp.broadcast_to(seed, (n, seed.shape[-1])), eps, g, d)
    counts = np.bincount(np.asarray(reports), minlength=g)
    probs = np.full(g, 1 / (math.exp(eps) + g - 1))
    probs[bucket] = math.exp(eps) / (math.exp(eps) + g - 1)
    ok, stat, bound = chi_square_ok(counts, probs)
    assert ok, (stat, bound)


@pytest.mark.parametrize("eps,g", [(1.0, 4), (2.0, 2)])
def test_audit_local_hashing(eps, g):
    d, n = 8, 100_000
    k0, k1, ks = jax.random.split(jax.random.key(17), 3)
    seeds = lh.local_hash_seeds(ks, (n,), d)  # public: the auditor sees every seed
    h = np.asarray(lh.local_hash(seeds[:, None, :], jnp.array([0, 1]), g))
    release = jax.jit(lh.local_hashing, static_argnums=(4, 5))
    out0 = np.asarray(release(k0, jnp.zeros(n, jnp.int32), seeds, eps, g, d))
    out1 = np.asarray(release(k1, jnp.ones(n, jnp.int32), seeds, eps, g, d))
    apart = h[:, 0] != h[:, 1]
    events = [
        lambda o: (o == h[:, 0]) & apart,
        lambda o: (o == h[:, 1]) & apart,
        lambda o: o == h[:, 0],
    ]
    hits0 = [int(np.sum(e(out0))) for e in events]
    hits1 = [int(np.sum(e(out1))) for e in events]
    eps_low = audit_epsilon(hits0, hits1, n)
    claim = float(epsilon(LocalHashingEvent(eps, g), 0.0))
    assert eps_low <= claim
    assert eps_low > 0.8 * claim


def test_olh_buckets():
    assert [lh.olh_buckets(e) for e in (0.0, 0.5, 1.0, 2.0, 4.0)] == [
        max(2, round(math.exp(e) + 1)) for e in (0.0, 0.5, 1.0, 2.0, 4.0)
    ]
    assert lh.olh_buckets(50.0) == lh.MAX_BUCKETS


@pytest.mark.slow  # the same binomial path is tested fast in test_oracles_unary.py
def test_simulation_counts_have_the_nominal_mean():
    hist = jnp.broadcast_to(jnp.array([200.0, 0.0, 50.0]), (300, 3))
    eps, g = 1.0, 4
    draws = np.asarray(lh.local_hashing_counts(KEY, hist, eps, g))
    n, h = 250.0, np.array([200.0, 0.0, 50.0])
    p, q = math.exp(eps) / (math.exp(eps) + g - 1), 1 / g
    mean = h * p + (n - h) * q
    var = h * p * (1 - p) + (n - h) * q * (1 - q)
    assert np.all(np.abs(draws.mean(0) - mean) <= 5.5 * np.sqrt(var / 300))


# --------------------------------------------------------------------------- fail closed, jit
SEEDS = lh.local_hash_seeds(jax.random.key(0), (3,), 10)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0], -1.0, 4, 10), "eps"),
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0], float("nan"), 4, 10), "eps"),
        (lambda: lh.local_hashing(KEY, 10, SEEDS[0], 1.0, 4, 10), "item"),
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0], 1.0, 1, 10), "g"),
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0], 1.0, 70000, 10), "g"),
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0, :3], 1.0, 4, 10), "seeds"),
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0], jnp.float16(1.0), 4, 10), "float16"),
        (lambda: lh.local_hashing(KEY, 1, SEEDS[0], 40.0, 4, 10), "too large"),
    ],
)
def test_concrete_bad_arguments_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_traced_bad_arguments_report_minus_one():
    release = jax.jit(lh.local_hashing, static_argnums=5)
    for eps in (-1.0, float("nan"), float("inf")):
        assert (
            np.asarray(release(KEY, jnp.array([1, 2, 3]), SEEDS, eps, 4, 10)).tolist() == [-1] * 3
        )
    assert np.asarray(release(KEY, jnp.array([10, -1, 3]), SEEDS, 1.0, 4, 10))[:2].tolist() == [
        -1,
        -1,
    ]
    assert np.asarray(release(KEY, jnp.array([1, 2, 3]), SEEDS, 1.0, 4.5, 10)).tolist() == [-1] * 3
    with no_privacy_permitted():
        exact = release(KEY, jnp.array([1, 2, 3]), SEEDS, float("inf"), 4, 10)
    assert (
        np.asarray(exact).tolist()
        == np.asarray(lh.local_hash(SEEDS, jnp.array([1, 2, 3]), 4)).tolist()
    )


def test_jits_with_literal_and_traced_budget(precision):
    items = jnp.array([0, 9, 4])
    release = lambda k, b: lh.local_hashing(k, items, SEEDS, b, 4, 10)  # noqa: E731
    literal = np.asarray(jax.jit(lambda k: release(k, 1.3))(KEY))
    traced = np.asarray(jax.jit(release)(KEY, jnp.asarray(1.3, precision)))
    assert np.all((literal >= 0) & (literal < 4))
    np.testing.assert_array_equal(literal, traced)
