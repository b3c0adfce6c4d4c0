"""Closed-form variances: the papers' printed formulas, independent derivations, gradients.

Expected values: Wang, Blocki, Li & Jha (USENIX Security 2017) print the f = 0 variances of
GRR, SUE (basic RAPPOR), OUE and OLH; Hadamard response's follows from p* = e^eps / (e^eps + 1),
q* = 1/2; subset selection's (p*, q*) are enumerated over all subsets in mpmath; the piecewise
mechanism's variance is integrated from its density (mpmath); Duchi et al.'s is B^2 - x^2. The
f-term is checked against the Bernoulli variances summed directly. Gradients (x64) against
central finite differences; the OLH optimum g = e^eps + 1 is where the gradient in g vanishes.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax import frequency as fq

N = 1000.0


@pytest.fixture(autouse=True)
def _digits():
    """60-digit mpmath for this module's tests only (mp.mp.dps is global to the process)."""
    with mp.workdps(60):
        yield


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_the_papers_formulas_at_f_zero(x64, eps):
    e = math.exp(eps)
    d, g = 7.0, 5.0
    np.testing.assert_allclose(
        fq.grr_variance(eps, d, N), N * (d - 2 + e) / (e - 1) ** 2, rtol=1e-12
    )
    np.testing.assert_allclose(
        fq.sue_variance(eps, N), N * math.sqrt(e) / (math.sqrt(e) - 1) ** 2, rtol=1e-12
    )
    np.testing.assert_allclose(fq.oue_variance(eps, N), N * 4 * e / (e - 1) ** 2, rtol=1e-12)
    np.testing.assert_allclose(
        fq.olh_variance(eps, g, N), N * (e - 1 + g) ** 2 / ((e - 1) ** 2 * (g - 1)), rtol=1e-12
    )
    np.testing.assert_allclose(fq.olh_variance(eps, e + 1, N), fq.oue_variance(eps, N), rtol=1e-12)
    np.testing.assert_allclose(
        fq.hadamard_variance(eps, N), N * ((e + 1) / (e - 1)) ** 2, rtol=1e-12
    )


def _subset_pq(eps, d, k):
    """(P[v in S | x = v], P[v in S | x != v]) by enumeration of the subset law."""
    subsets = list(itertools.combinations(range(d), k))
    z = math.comb(d - 1, k - 1) * mp.exp(eps) + math.comb(d - 1, k)
    law = {s: (mp.exp(eps) if 0 in s else 1) / z for s in subsets}  # true item 0
    return sum(pr for s, pr in law.items() if 0 in s), sum(pr for s, pr in law.items() if 1 in s)


@pytest.mark.parametrize("d,k", [(5, 2), (7, 3), (6, 1)])
def test_subset_selection_variance_from_the_enumerated_law(x64, d, k):
    eps, f = 1.3, 0.2
    p, q = _subset_pq(mp.mpf(eps), d, k)
    exact = N * q * (1 - q) / (p - q) ** 2 + N * f * (p * (1 - p) - q * (1 - q)) / (p - q) ** 2
    np.testing.assert_allclose(float(fq.subset_variance(eps, d, k, N, f)), float(exact), rtol=1e-12)
    pp, qq = fq.subset_probabilities(eps, d, k)
    np.testing.assert_allclose([float(pp), float(qq)], [float(p), float(q)], rtol=1e-12)


def test_f_term_is_the_summed_bernoulli_variance(x64):
    p, q, f = 0.7, 0.2, 0.35
    direct = (N * f * p * (1 - p) + N * (1 - f) * q * (1 - q)) / (p - q) ** 2
    np.testing.assert_allclose(float(fq.count_variance(N, f, p, q)), direct, rtol=1e-12)


def _pm_variance(eps, x):
    s = mp.exp(mp.mpf(eps) / 2)
    c = (s + 1) / (s - 1)
    p = (s * s - s) / (2 * s + 2)
    left = (c + 1) / 2 * x - (c - 1) / 2
    right = left + c - 1

    def piece(a, b, dens):
        return dens * ((b - x) ** 3 - (a - x) ** 3) / 3  # integral of (t - x)^2

    return piece(-c, left, p / s**2) + piece(left, right, p) + piece(right, c, p / s**2)


@pytest.mark.parametrize("eps,x", [(0.5, 0.0), (1.0, -0.7), (3.0, 1.0), (6.0, 0.25)])
def test_mean_mechanism_variances(x64, eps, x):
    np.testing.assert_allclose(
        float(fq.piecewise_variance(eps, x)), float(_pm_variance(eps, mp.mpf(x))), rtol=1e-12
    )
    b = (math.exp(eps) + 1) / (math.exp(eps) - 1)
    np.testing.assert_allclose(float(fq.duchi_variance(eps, x)), b * b - x * x, rtol=1e-12)
    beta = -math.expm1(-eps / 2) if eps > 0.61 else 0.0
    np.testing.assert_allclose(
        float(fq.hybrid_variance(eps, x)),
        beta * float(_pm_variance(eps, mp.mpf(x))) + (1 - beta) * (b * b - x * x),
        rtol=1e-12,
    )


GRADIENTS = {
    "grr": (lambda a: fq.grr_variance(a[0], a[1], a[2], 0.1), [1.2, 6.0, 500.0]),
    "olh": (lambda a: fq.olh_variance(a[0], a[1], a[2], 0.1), [1.2, 3.5, 500.0]),
    "subset": (lambda a: fq.subset_variance(a[0], a[1], a[2], a[3], 0.1), [1.2, 9.0, 3.0, 500.0]),
    "sue": (lambda a: fq.sue_variance(a[0], a[1], 0.1), [1.2, 500.0]),
    "oue": (lambda a: fq.oue_variance(a[0], a[1], 0.1), [1.2, 500.0]),
    "hadamard": (lambda a: fq.hadamard_variance(a[0], a[1], 0.1), [1.2, 500.0]),
    "duchi": (lambda a: fq.duchi_variance(a[0], a[1]), [1.2, 0.3]),
    "piecewise": (lambda a: fq.piecewise_variance(a[0], a[1]), [1.2, 0.3]),
    "hybrid": (lambda a: fq.hybrid_variance(a[0], a[1]), [1.2, 0.3]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_finite_differences(x64, name):
    fn, point = GRADIENTS[name]
    point = jnp.asarray(point, jnp.float64)
    grad = np.asarray(jax.grad(fn)(point))
    for i in range(point.shape[0]):
        h = 1e-6 * max(1.0, abs(float(point[i])))
        up, down = point.at[i].add(h), point.at[i].add(-h)
        fd = (float(fn(up)) - float(fn(down))) / (2 * h)
        assert abs(grad[i] - fd) <= 1e-6 * max(1.0, abs(fd)), (i, grad[i], fd)


def test_olh_optimum_is_e_to_the_eps_plus_one(x64):
    for eps in (0.5, 1.0, 3.0):
        slope = jax.grad(fq.olh_variance, argnums=1)(eps, math.exp(eps) + 1, N)
        assert abs(float(slope)) < 1e-8 * float(fq.olh_variance(eps, math.exp(eps) + 1, N))


def test_bad_arguments():
    with pytest.raises(ValueError, match="eps"):
        fq.oue_variance(0.0, N)
    with pytest.raises(ValueError, match="d"):
        fq.grr_variance(1.0, 1.5, N)
    with pytest.raises(ValueError, match="x"):
        fq.duchi_variance(1.0, 1.5)
    assert np.isnan(float(jax.jit(lambda e: fq.hadamard_variance(e, N))(-1.0)))
    assert np.isnan(float(jax.grad(lambda e: fq.sue_variance(e, N))(-1.0)))
