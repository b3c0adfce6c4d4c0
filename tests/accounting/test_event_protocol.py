"""The event protocol: third-party events, the generic pure / (eps, delta) events, composition.

References are closed forms computed here in NumPy: the eps0-DP profile
(e^eps0 - e^eps) / (1 + e^eps0), the (eps0, delta0)-DP profile delta0 + (1 - delta0) times it,
f_{eps0, delta0}(alpha) = max(0, 1 - delta0 - e^eps0 alpha, e^-eps0 (1 - delta0 - alpha)), and
basic composition (eps and delta add).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import _validation as v
from ldpjax import accounting as acc
from ldpjax.accounting import accountant as A
from ldpjax.accounting import composition as C
from ldpjax.accounting import events as E


class Coin(NamedTuple):
    """A third-party pure event: only ``pure_eps`` and a check."""

    eps: float

    def check(self, where):
        v.check_range(f"{where}eps", self.eps, 0.0, math.inf)

    def pure_eps(self, dtype):
        return jnp.asarray(self.eps, dtype)


class Whistle(NamedTuple):
    """A third-party GDP event: only ``gdp_mu``."""

    mu: float

    def gdp_mu(self, dtype):
        return jnp.asarray(self.mu, dtype)


@dataclasses.dataclass(frozen=True)
class Profiled:
    """A third-party event with its own profile only (here: mu-GDP's, for a reference)."""

    mu: float

    def delta_at(self, eps):
        return acc.gdp_delta(self.mu, eps)

    def epsilon_at(self, log_delta):
        return acc.gdp_epsilon(self.mu, jnp.exp(log_delta))


def _pure_delta(eps0, eps):
    return max(0.0, (math.exp(eps0) - math.exp(eps)) / (1.0 + math.exp(eps0)))


def test_third_party_events_are_accounted():
    assert float(A.epsilon(Coin(0.7), 0.0)) == pytest.approx(0.7)
    assert float(A.delta(Coin(0.7), 0.2)) == pytest.approx(_pure_delta(0.7, 0.2), rel=1e-6)
    assert float(A.tradeoff(Coin(1.0), 0.05)) == pytest.approx(1.0 - math.e * 0.05, rel=1e-6)
    # composes with the library's events: basic composition with RR, exact with Gaussians
    rr = E.RandomizedResponseEvent(0.5)
    assert float(acc.epsilon(C.ComposedEvent((Coin(0.7), rr)), 0.0)) == pytest.approx(0.7 + math.log(3.0), rel=1e-6)
    assert float(A.pure_epsilon(C.SelfComposedEvent(Coin(0.5), 3))) == pytest.approx(1.5)
    gauss = C.ComposedEvent((Whistle(0.6), E.GaussianEvent(0.8)))
    assert float(A.composed_mu(gauss)) == pytest.approx(1.0, rel=1e-6)
    assert float(A.delta(gauss, 1.0)) == pytest.approx(float(acc.gdp_delta(1.0, 1.0)), rel=1e-6)
    own = Profiled(1.0)
    assert float(A.delta(own, 1.0)) == pytest.approx(float(acc.gdp_delta(1.0, 1.0)), rel=1e-6)
    worst = C.ParallelEvent((own, E.GaussianEvent(0.5)))
    assert float(A.epsilon(worst, 1e-5)) == pytest.approx(float(acc.gdp_epsilon(1.0, 1e-5)), rel=1e-5)
    assert A.describe(own) == {"type": "Profiled", "mu": 1.0}
    assert A.route(own) == "profile" and A.route(gauss) == "gdp" and A.route(Coin(1.0)) == "pure"


def test_third_party_checks_and_failures():
    with pytest.raises(ValueError, match=r"events\[1\]\.eps must be"):
        A.epsilon(C.ComposedEvent((E.LaplaceEvent(1.0), Coin(-1.0))), 1e-5)
    with pytest.raises(NotImplementedError, match="object"):
        A.delta(object(), 1.0)
    # Coin (pure_eps only) + Gaussian: accounted by the PLD (Coin as the worst eps-DP pair; this
    # used to raise NotImplementedError). Exact: condition on the pair's loss +-1 (P-masses
    # e/(1+e), 1/(1+e)): delta(e) = p H(e - 1) + q H(e + 1), H mu-GDP's hockey stick at any real e
    mixed = C.ComposedEvent((Coin(1.0), E.GaussianEvent(1.0)))
    p_up = math.e / (1 + math.e)
    exact = p_up * _gdp_hockey(1.0, 0.0) + (1 - p_up) * _gdp_hockey(1.0, 2.0)
    assert A.route(mixed) == "pld"
    assert exact * (1 - 1e-6) <= float(A.delta(mixed, 1.0)) <= exact * 1.1  # float32: 10%
    with pytest.raises(NotImplementedError, match="tradeoff"):  # an own profile without a curve
        A.tradeoff(Profiled(1.0), 0.1)


def _gdp_hockey(mu: float, e: float) -> float:
    from scipy.stats import norm

    return float(norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2))


def test_pure_event_closed_forms_and_laplace():
    eps = np.array([0.0, 0.3, 1.0, 2.0])
    for eps0 in (0.5, 1.0):
        ours = np.asarray(A.delta(E.PureDpEvent(eps0), eps))
        np.testing.assert_allclose(ours, [_pure_delta(eps0, e) for e in eps], rtol=1e-6, atol=1e-7)
        # the continuous Laplace mechanism's own profile 1 - e^((e - eps0)/2) lies below the
        # worst eps0-DP pair's (LaplaceEvent is no longer accounted as that pair)
        laplace = np.asarray(A.delta(E.LaplaceEvent(eps0), eps))
        np.testing.assert_allclose(laplace, np.maximum(0.0, -np.expm1((eps - eps0) / 2)),
                                   rtol=1e-6, atol=1e-7)
        assert np.all(laplace <= ours + 1e-7)
        assert float(A.epsilon(E.PureDpEvent(eps0), 0.0)) == pytest.approx(eps0)
    assert float(A.epsilon(E.PureDpEvent(math.inf), 0.5)) == math.inf


def test_approx_event_closed_forms():
    eps0, delta0 = 1.0, 1e-3
    event = E.ApproxDpEvent(eps0, delta0)
    for e in (0.0, 0.5, 1.0, 3.0):
        expected = delta0 + (1 - delta0) * _pure_delta(eps0, e)
        assert float(A.delta(event, e)) == pytest.approx(expected, rel=1e-5)
    # epsilon inverts the profile; below delta0 no finite eps
    assert float(A.epsilon(event, 0.1)) == pytest.approx(
        eps0 + math.log1p(-(0.1 - delta0) / (1 - delta0) * (1 + math.exp(-eps0))), rel=1e-5)
    assert float(A.epsilon(event, 1e-4)) == math.inf
    assert float(A.epsilon(event, 2e-3)) <= eps0
    for a in (0.0, 0.05, 0.5, 0.999):
        expected = max(0.0, 1 - delta0 - math.exp(eps0) * a, math.exp(-eps0) * (1 - delta0 - a))
        assert float(A.tradeoff(event, a)) == pytest.approx(expected, rel=1e-5, abs=1e-7)
    # delta0 = 0 is the pure event (at the eps grid of the pure test: one shape, shared kernels)
    eps = np.array([0.0, 0.2, 1.0, 2.0])
    np.testing.assert_allclose(np.asarray(A.delta(E.ApproxDpEvent(0.5, 0.0), eps)),
                               np.asarray(A.delta(E.PureDpEvent(0.5), eps)), rtol=1e-6)
    assert float(A.epsilon(E.ApproxDpEvent(0.5, 1.0), 0.5)) == math.inf  # delta0 = 1: no privacy


def _exact_pairs_epsilon(delta0: float, pairs: list[float], d: float) -> float:
    """epsilon(d) of delta0 at +inf and (1 - delta0) times the product of eps-DP pairs (losses
    +-eps_i, P-masses sigmoid(+-eps_i)), by enumerating the 2^m atoms and bisecting."""
    import itertools

    atoms = [(sum(s * e for s, e in zip(signs, pairs, strict=True)),
              math.prod(1 / (1 + math.exp(-s * e)) for s, e in zip(signs, pairs, strict=True)))
             for signs in itertools.product((1, -1), repeat=len(pairs))]

    def delta(eps):
        return delta0 + (1 - delta0) * sum(w * max(0.0, -math.expm1(eps - x)) for x, w in atoms)

    lo, hi = 0.0, max(x for x, _ in atoms)
    for _ in range(200):
        lo, hi = (lo, 0.5 * (lo + hi)) if delta(0.5 * (lo + hi)) <= d else (0.5 * (lo + hi), hi)
    return hi


def test_basic_composition_of_pure_and_approx_parts():
    composed = C.ComposedEvent((E.PureDpEvent(0.5), E.ApproxDpEvent(0.25, 1e-4), E.RandomizedResponseEvent(0.5)))
    reference = E.ApproxDpEvent(0.75 + math.log(3.0), 1e-4)
    # now accounted by the PLD (route "pld", no longer "approx"): never above basic composition,
    # never below the exact composition (enumerated), within 4 grid cells of it (float32: 2^-8)
    assert A.route(composed) == "pld"
    for d in (1e-3, 0.1):
        ours = float(A.epsilon(composed, d))
        exact = _exact_pairs_epsilon(1e-4, [0.5, 0.25, math.log(3.0)], d)
        assert exact - 1e-6 <= ours <= min(exact + 4 * 2.0**-8, float(A.epsilon(reference, d)))
    # at d = delta0 only the top loss is allowed: basic composition's 0.75 + log 3 exactly in
    # float64; float32's error floor may make the bound inf (valid, never below)
    assert float(A.epsilon(composed, 1e-4)) >= 0.75 + math.log(3.0) - 1e-6
    reused = C.SelfComposedEvent(E.ApproxDpEvent(0.2, 1e-5), 3)
    assert float(A.delta(reused, 0.6)) == pytest.approx(3e-5, rel=1e-4)
    assert float(A.epsilon(reused, 2e-5)) == math.inf


def test_approx_event_validation_traced_and_gradient():
    with pytest.raises(ValueError, match="^eps must be"):
        A.delta(E.ApproxDpEvent(-1.0, 0.0), 1.0)
    with pytest.raises(ValueError, match=r"^event\.delta must be"):
        A.delta(C.SelfComposedEvent(E.ApproxDpEvent(1.0, 1.5), 2), 1.0)
    f = jax.jit(jax.vmap(jax.value_and_grad(lambda x: A.delta(E.ApproxDpEvent(x[0], x[1]), 0.5))))
    values, grads = f(jnp.array([[-1.0, 0.0], [1.0, -0.1], [1.0, jnp.nan], [1.0, 1e-3]]))
    assert np.all(np.isnan(values[:3])) and np.all(np.isnan(grads[:3]))
    assert np.isfinite(values[3]) and np.all(np.isfinite(grads[3]))


def test_generic_events_keep_the_dtype(x64):
    assert A.epsilon(E.ApproxDpEvent(1.0, 1e-6), 1e-5).dtype == jnp.float64
    with jax.enable_x64(False):
        assert A.epsilon(E.ApproxDpEvent(1.0, 1e-6), 1e-5).dtype == jnp.float32
        assert A.epsilon(Coin(1.0), 1e-300).dtype == jnp.float32
