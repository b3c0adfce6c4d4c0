"""The PLD accountant: discretisation, FFT composition, golden values, gradients, sweeps.

References are independent of the code under test: closed forms in NumPy/SciPy (mu-GDP's
profile, randomized response's max(0, p - e^eps q), the (eps, delta)-DP pair's profile), a
direct NumPy sum for the discrete Gaussian, mpmath for delta = 1e-300, Google's dp_accounting
PLDs built directly (``privacy_loss_distribution.from_*``) at the same interval, and float64
central finite differences for gradients.

Tolerances. Connect-the-dots keeps every hockey-stick divergence *at grid points* (the
pessimistic PLD's curve is the chord of the true one in e^eps), so there ours equals the
closed form up to rounding and the declared widening (64 + 1024 eps relative): 1e-9 relative
in float64. Against dp_accounting at interval h: both are connect-the-dots for continuous
parts; for point masses dp_accounting rounds up (pessimistic) or down (optimistic) and ours
splits them (tighter than its pessimistic, looser than its optimistic), so ours must lie in
[optimistic, pessimistic] up to rounding: 1e-6 (1 + eps) in float64.
"""

from __future__ import annotations

import math

import chex
import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from scipy.stats import norm

from ldpjax.accounting import accountant as A
from ldpjax.accounting import composition as Comp
from ldpjax.accounting import events as E
from ldpjax.accounting import pld as P
from ldpjax.accounting import pld_accountant as PA
from ldpjax.accounting import pld_events as PE
from ldpjax.accounting.subsampling import PoissonSampledEvent

G, R, K, L = E.GaussianEvent, E.RandomizedResponseEvent, E.KaryRandomizedResponseEvent, E.LaplaceEvent
D, M, AP, PU = E.DiscreteGaussianEvent, E.GaussianMixtureEvent, E.ApproxDpEvent, E.PureDpEvent
C, S = Comp.ComposedEvent, Comp.SelfComposedEvent
GRID = P.PldGrid(2.0**-8, -8.0, 56.0 - 2.0**-8)  # 2^14 losses: one compiled grid for the module


def rate(eps: float) -> float:
    return math.tanh(eps / 2)


# --------------------------------------------------------------------------- references
def gdp_delta_ref(mu: float, eps: np.ndarray) -> np.ndarray:
    return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def pair_delta_ref(prob: float, q: float, eps: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, prob - np.exp(eps) * q)


def pure_delta_ref(eps0: float, eps: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, (math.exp(eps0) - np.exp(eps)) / (1 + math.exp(eps0)))


def laplace_delta_ref(eps0: float, eps: np.ndarray) -> np.ndarray:
    # Lap(0, 1/eps0) against Lap(1, 1/eps0): the loss exceeds e left of x0 = (1 - e/eps0) / 2,
    # so delta = P(X < x0) - e^e Q(X < x0) = 1 - e^((e - eps0)/2) for 0 <= e < eps0
    return np.maximum(0.0, -np.expm1((np.asarray(eps) - eps0) / 2))


def dg_delta_ref(sigma: float, shift: int, eps: np.ndarray) -> np.ndarray:
    y = np.arange(-4000, 4001, dtype=np.float64)
    w = np.exp(-0.5 * (y / sigma) ** 2)
    w /= w.sum()
    loss = (shift**2 - 2 * y * shift) / (2 * sigma**2)
    gain = [np.where(loss > e, -np.expm1(np.minimum(e - loss, 0.0)), 0.0) for e in np.atleast_1d(eps)]
    return np.array([np.sum(w * g) for g in gain])


def krr_pq(xi: float, k: int) -> tuple[float, float]:
    return math.exp(xi) / (k - 1 + math.exp(xi)), 1 / (k - 1 + math.exp(xi))


SINGLES = [
    (G(0.7), lambda e: gdp_delta_ref(0.7, e)),
    (R(0.5), lambda e: pair_delta_ref(0.75, 0.25, e)),
    (K(1.3, 5), lambda e: pair_delta_ref(*krr_pq(1.3, 5), e)),
    (L(0.9), lambda e: laplace_delta_ref(0.9, e)),
    (PU(2.0), lambda e: pure_delta_ref(2.0, e)),
    (AP(1.0, 1e-4), lambda e: 1e-4 + (1 - 1e-4) * pure_delta_ref(1.0, e)),
    (D(3.0, 2), lambda e: dg_delta_ref(3.0, 2, e)),
    (M([1.0, 0.3], [0.4, 0.6]), lambda e: 0.4 * gdp_delta_ref(1.0, e) + 0.6 * gdp_delta_ref(0.3, e)),
]


# --------------------------------------------------------------------------- grid and record
def test_grid_record_and_errors():
    grid = P.PldGrid(2.0**-4, -1.0, 2.0)
    # the FFT length is the smallest even 5-smooth length >= the size: 50 = 2 * 5^2
    assert (grid.first, grid.last, grid.size, grid.fft_size) == (-16, 32, 49, 50)
    assert hash(grid) == hash(P.PldGrid(2.0**-4, -1.0, 2.0))  # static: one compile per grid
    np.testing.assert_array_equal(np.asarray(P.grid_losses(grid, jnp.float32)),
                                  np.arange(-16, 33) / 16.0)
    with pytest.raises(ValueError, match=r"PldGrid\.lower must be in \(-inf, 0\]"):
        P.PldGrid(0.1, 1.0, 2.0)
    with pytest.raises(ValueError, match=r"PldGrid\.interval must be in \(0, inf\)"):
        P.PldGrid(0.0, -1.0, 2.0)
    with pytest.raises(ValueError, match=r"PldGrid\.upper must be in \(0, inf\)"):
        P.PldGrid(0.1, -1.0, 0.0)
    with pytest.raises(ValueError, match="at most 16777216"):
        P.PldGrid(1e-9, -1.0, 1.0)
    # a non-binary interval: losses rounded towards the pessimistic side
    odd = P.PldGrid(0.1, -1.0, 1.0)
    exact = 0.1 * np.arange(odd.first, odd.last + 1)
    assert np.all(np.asarray(P.grid_losses(odd, jnp.float32)) >= exact.astype(np.float32))
    assert np.all(np.asarray(P.grid_losses(odd, jnp.float32, False)) <= exact)


# --------------------------------------------------------------------------- single releases
@pytest.mark.parametrize("event, reference", SINGLES, ids=[type(e).__name__ for e, _ in SINGLES])
def test_single_release_is_exact_at_grid_points(x64, event, reference):
    pess = PE.event_pld(event, GRID)
    opt = PE.event_pld(event, GRID, pessimistic=False)
    on_grid = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0])  # multiples of 2^-8
    ref = reference(on_grid)
    ours = np.asarray(P.pld_delta(pess, on_grid))
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-14)
    assert np.all(ours >= ref)  # widened: never below
    assert np.all(np.asarray(P.pld_delta(opt, on_grid)) <= ref * (1 + 1e-12))
    # between grid points the pessimistic curve is a chord above the true (convex) one
    off = on_grid + 2.0**-9
    assert np.all(np.asarray(P.pld_delta(pess, off)) >= reference(off) * (1 - 1e-12))


@pytest.mark.parametrize("mu", [0.004, 0.03])
def test_gaussian_on_wide_cells_is_exact_at_grid_points(x64, mu):
    # mu < 20 h (h = 2^-8): the shares come from normal CDFs near the loss 0 and from Mills'
    # ratio, rounded up, beyond 128 cells (32 sd at mu = 0.03): still the chord at grid points
    pess = PE.event_pld(G(mu), GRID)
    opt = PE.event_pld(G(mu), GRID, pessimistic=False)
    on_grid = np.arange(0, 12) * 2.0**-8
    with mp.workdps(60):  # scipy's difference of CDFs loses the far tail's digits
        ref = np.array([float(mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2))
                        for e in map(mp.mpf, on_grid)])
    ours = np.asarray(P.pld_delta(pess, on_grid))
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-14)
    assert np.all(ours >= ref)
    assert np.all(np.asarray(P.pld_delta(opt, on_grid)) <= ref * (1 + 1e-12))


def test_gaussian_wide_and_narrow_cells_batch_as_alone():
    # under vmap both ways of building the cells run and each batch entry takes its own
    batch = jax.vmap(lambda m: PE.release_pld(G(m), GRID, True, jnp.float32).log_mass)(
        jnp.asarray([0.03, 1.0], jnp.float32))
    for i, mu in enumerate((0.03, 1.0)):
        alone = PE.event_pld(G(jnp.float32(mu)), GRID).log_mass
        np.testing.assert_allclose(np.asarray(batch[i]), np.asarray(alone), rtol=1e-6,
                                   atol=1e-6)


def test_single_release_float32_never_below():
    # (float32) : a computed atom is moved up by 4 eps of its loss before it is split, so an atom
    # exactly on a grid point (pure DP at eps0 = 2) leaves up to 4 eps / h of its mass one
    # point up: delta(2) <= 4 eps * 2 / h * (1 - e^-h) < 1e-6 where the exact value is 0
    on_grid = np.array([0.0, 0.5, 1.0, 2.0])
    for event, reference in SINGLES:
        ours = np.asarray(P.pld_delta(PE.event_pld(event, GRID), on_grid), np.float64)
        ref = reference(on_grid)
        assert np.all(ours >= ref * (1 - 1e-7) - 1e-30), type(event).__name__
        np.testing.assert_allclose(ours, ref, rtol=2e-3, atol=1e-6)


def test_masses_are_kept_not_dropped(x64):
    # the upper law's mass is kept (moved up or split, never dropped): mass + inf >= 1
    for event, _ in SINGLES:
        pld = PE.event_pld(event, GRID)
        total = float(jax.nn.logsumexp(jnp.append(pld.log_mass, pld.log_inf)))
        assert total >= -1e-12, type(event).__name__
    # randomized response beyond the grid's top: all its upper mass at +inf
    far = PE.randomized_response_pld(math.tanh(40.0), P.PldGrid(0.5, -1.0, 8.0))
    assert float(P.pld_delta(far, 7.9)) == pytest.approx((1 + math.tanh(40.0)) / 2, rel=1e-12)
    assert float(P.pld_epsilon(PE.no_privacy_pld(GRID), 0.5)) == math.inf


# --------------------------------------------------------------------------- composition
def _mix_cases():
    return [
        ("G+R", C((S(G(0.5), 5), R(0.5))), 1e-5),
        ("R+K", C((S(R(rate(0.8)), 20), S(K(1.0, 3), 10))), 1e-6),
        ("L+P+G", C((L(1.0), PU(0.5), G(1.0))), 1e-5),
        ("A+R", C((AP(0.5, 1e-7), S(R(rate(0.3)), 10))), 1e-5),
        ("D+G", C((S(D(4.0, 2), 5), S(G(0.3), 5))), 1e-6),
        ("M+R", C((M([1.0, 0.5], [0.5, 0.5]), S(R(rate(0.5)), 3))), 1e-5),
        ("K", S(K(0.7, 4), 30), 1e-6),
        ("A+G", C((S(AP(0.3, 1e-8), 3), S(G(0.4), 2))), 1e-5),
        ("D+K+L", C((D(3.0, 1), K(1.0, 6), L(0.4))), 1e-5),
        ("M+D+A", C((S(M([0.8, 0.4], [0.3, 0.7]), 4), S(D(5.0, 3), 2), AP(0.2, 1e-9))), 1e-6),
        ("G+L+K", C((S(G(0.2), 10), S(L(0.1), 10), S(K(0.5, 3), 5))), 1e-6),
        ("P+M", C((S(PU(0.05), 50), S(M([0.5, 0.2], [0.5, 0.5]), 5))), 1e-6),
    ]


def _dpa_release(event, pess: bool, h: float):
    """dp_accounting's PLD of the same worst pair, built directly."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as PLD

    if isinstance(event, G):
        return PLD.from_gaussian_mechanism(1 / float(event.mu), pessimistic_estimate=pess,
                                           value_discretization_interval=h)
    if isinstance(event, R):
        return PLD.from_randomized_response(1 - float(event.r), 2, pessimistic_estimate=pess,
                                            value_discretization_interval=h)
    if isinstance(event, K):
        xi, k = float(event.xi), int(event.k)
        return PLD.from_randomized_response(k / (k - 1 + math.exp(xi)), k, pessimistic_estimate=pess,
                                            value_discretization_interval=h)
    if isinstance(event, L):  # the continuous Laplace mechanism at scale 1 / eps
        return PLD.from_laplace_mechanism(1 / float(event.eps), sensitivity=1,
                                          pessimistic_estimate=pess,
                                          value_discretization_interval=h)
    if isinstance(event, PU):
        return PLD.from_randomized_response(2 / (math.exp(float(event.eps)) + 1), 2,
                                            pessimistic_estimate=pess, value_discretization_interval=h)
    if isinstance(event, AP):
        eps, delta = float(event.eps), float(event.delta)
        if pess:
            return PLD.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, delta), h)
        masses = {math.floor(eps / h): (1 - delta) / (1 + math.exp(-eps)),
                  math.floor(-eps / h): (1 - delta) / (1 + math.exp(eps))}
        return PLD.PrivacyLossDistribution.create_from_rounded_probability(
            masses, delta, h, pessimistic_estimate=False)
    if isinstance(event, D):
        return PLD.from_discrete_gaussian_mechanism(float(event.sigma), int(event.shift),
                                                    pessimistic_estimate=pess,
                                                    value_discretization_interval=h)
    if isinstance(event, M):
        mus, weights = [float(m) for m in event.mus], [float(w) for w in event.weights]
        out = _dpa_release(G(mus[0]), pess, h)
        total = weights[0]
        for mu, w in zip(mus[1:], weights[1:], strict=True):
            out = out.compute_mixture(_dpa_release(G(mu), pess, h), total / (total + w))
            total += w
        return out
    raise AssertionError(event)


def dpa_epsilon(event, delta: float, h: float) -> tuple[float, float]:
    """(optimistic, pessimistic) epsilon of dp_accounting's PLDs of ``event``'s parts."""
    out = []
    for pess in (False, True):
        total = None
        for part, count in PE.sequential_items(event):
            pld = _dpa_release(part, pess, h)
            if count is not None:
                pld = pld.self_compose(int(count))
            total = pld if total is None else total.compose(pld)
        out.append(total.get_epsilon_for_delta(delta))
    return out[0], out[1]


FAST_MIXES = ("G+R", "A+R")


def _mix_params(fast: bool):
    return [pytest.param(*c, id=c[0]) for c in _mix_cases() if (c[0] in FAST_MIXES) == fast]


@pytest.mark.parametrize("name, event, delta", _mix_params(fast=True))
def test_mixes_within_dp_accounting(x64, name, event, delta):
    _within_dp_accounting(name, event, delta)


@pytest.mark.slow
@pytest.mark.parametrize("name, event, delta", _mix_params(fast=False))
def test_more_mixes_within_dp_accounting(x64, name, event, delta):
    _within_dp_accounting(name, event, delta)


def _within_dp_accounting(name, event, delta):
    pytest.importorskip("dp_accounting")
    h = 2.0**-8
    lo, hi = dpa_epsilon(event, delta, h)
    grid = P.PldGrid(h, -8.0, 56.0 - h)
    ours = float(PA.pld_event_epsilon(event, delta, grid))
    tol = 1e-6 * (1 + hi)
    assert lo - tol <= ours <= hi + tol, (name, lo, ours, hi)


def canon(mu, r, xi):
    """The composition most tests share (one compiled kernel per dtype)."""
    return C((S(G(mu), 10), S(R(r), 10), K(xi, 3)))


def test_float32_composition_is_an_upper_bound():
    # float32 may be looser than float64 (its FFT rounding floor is larger) but never below it
    for args in ((0.3, 0.2, 1.0), (0.1, 0.6, 0.2)):
        ours32 = float(PA.pld_event_epsilon(canon(*args), 1e-6, GRID))
        with jax.enable_x64(True):
            ours64 = float(PA.pld_event_epsilon(canon(*args), 1e-6, GRID))
        assert ours64 * (1 - 1e-6) <= ours32 <= ours64 * 1.01 + 4 * GRID.interval, args


def test_fft_bound_makes_masses_upper_bounds():
    # float32 composed masses (with the FFT error bound) dominate the float64 ones entrywise
    grid = P.PldGrid(2.0**-6, -8.0, 24.0 - 2.0**-6)
    for event in (S(R(rate(0.5)), 40),):  # a lattice: the hardest case for a uniform floor
        pld32 = PE.event_pld(event, grid, tilt=1.0)
        with jax.enable_x64(True):
            pld64 = PE.event_pld(event, grid, tilt=1.0)
            ref = np.asarray(pld64.log_mass)
        ours = np.asarray(pld32.log_mass, np.float64)
        # entries float64 resolves (its own bound is far below them)
        seen = ref > np.max(ref) - 60
        assert np.all(ours[seen] >= ref[seen] - 1e-6), type(event.event).__name__


def test_a_grid_too_short_for_a_composition_is_refused(x64):
    # 40 uses of (1-GDP + RR(eps 0.2)) composed by FFT: the loss has mean about 20, so a grid ending
    # at 12 cannot hold it (the Chernoff bound of the mass above 12 is far above delta): a
    # concrete call raises (a traced one is NaN: the slow test below)
    event = S(C((G(1.0), R(rate(0.2)))), 40)
    grid = P.PldGrid(2.0**-6, -4.0, 12.0)
    with pytest.raises(ValueError, match=r"cannot hold SelfComposedEvent\(ComposedEvent.*"
                                         r"needs losses up to about"):
        PA.pld_event_epsilon(event, 1e-3, grid)
    # Gaussian uses merge into one Gaussian (mu^2 add) before the grid: on a short grid its
    # mass above the top counts as infinite loss, so epsilon is inf (a valid bound); on a
    # wide grid it is within two intervals above the exact sqrt(40)-GDP value
    gauss = S(G(1.0), 40)
    assert math.isinf(float(PA.pld_event_epsilon(gauss, 1e-3, grid)))
    wide = P.PldGrid(2.0**-6, -4.0, 64.0)
    exact = float(A.epsilon(G(math.sqrt(40.0)), 1e-3))
    assert exact <= float(PA.pld_event_epsilon(gauss, 1e-3, wide)) <= exact + 2 * wide.interval


@pytest.mark.slow
def test_a_grid_too_short_gives_nan_when_traced():
    grid = P.PldGrid(2.0**-6, -4.0, 12.0)
    traced = jax.jit(lambda mu: PA.pld_event_epsilon(S(C((G(mu), R(rate(0.2)))), 40),
                                                     1e-3, grid))(1.0)
    assert math.isnan(float(traced))


# --------------------------------------------------------------------------- tiny delta
def _mp_delta_g_rr(mu, r, eps):
    """delta(eps) of mu-GDP composed with RR(r), exactly, in mpmath: the RR loss is +-e_r with
    P-masses (1 +- r)/2, and mu-GDP's hockey stick at t (any real t) is
    Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2)."""
    mp.mp.dps = 60
    mu, r, eps = mp.mpf(mu), mp.mpf(r), mp.mpf(eps)
    e_r = mp.log((1 + r) / (1 - r))

    def hs(t):
        return mp.ncdf(-t / mu + mu / 2) - mp.exp(t) * mp.ncdf(-t / mu - mu / 2)

    return (1 + r) / 2 * hs(eps - e_r) + (1 - r) / 2 * hs(eps + e_r)


@pytest.mark.parametrize("use_x64", [False, True])
def test_delta_1e_300(use_x64):
    event = C((G(0.5), R(0.5)))
    grid = P.PldGrid(2.0**-8, -8.0, 24.0 - 2.0**-8)
    with jax.enable_x64(use_x64):
        ours = float(A.epsilon(event, 1e-300, grid=grid))
    assert math.isfinite(ours)
    # the exact epsilon: delta(ours) <= 1e-300 and delta(ours - 1%) > 1e-300 (not loose)
    assert _mp_delta_g_rr(0.5, 0.5, ours) <= mp.mpf("1e-300")
    assert _mp_delta_g_rr(0.5, 0.5, ours * 0.99) > mp.mpf("1e-300")


# --------------------------------------------------------------------------- gradients, sweeps
def _check_gradients(eps_of, args):
    grads = jax.grad(eps_of, argnums=tuple(range(len(args))))(*args)
    for i, g in enumerate(grads):
        h = 1e-4 * max(abs(args[i]), 1e-4)
        up, down = list(args), list(args)
        up[i] += h
        down[i] -= h
        fd = (float(eps_of(*up)) - float(eps_of(*down))) / (2 * h)
        # piecewise smooth on the grid: the root's cell changes slope by O(interval) relatively
        assert float(g) == pytest.approx(fd, rel=5e-3, abs=1e-6), (i, float(g), fd)


def test_gradients_match_finite_differences(x64):
    # xi off the grid's points: an atom on a point is a kink of its connect-the-dots shares
    _check_gradients(lambda mu, r, xi: PA.pld_event_epsilon(canon(mu, r, xi), 1e-6, GRID),
                     (0.3, 0.2, 1.01))


@pytest.mark.slow
def test_gradients_of_every_parameter(x64):
    grid = P.PldGrid(2.0**-10, -8.0, 24.0 - 2.0**-10)

    def eps_of(mu, r, xi, lap, sigma, w, d0, q):
        event = C((S(G(mu), 3), R(r), K(xi, 4), L(lap), D(sigma, 2),
                   M(jnp.stack([1.0, 0.4]), jnp.stack([w, 1 - w])), AP(0.2, d0),
                   S(PoissonSampledEvent(G(1.0), q), 5)))
        return PA.pld_event_epsilon(event, 1e-6, grid)

    # the Laplace budget off the grid's points (0.503, not 0.5): an atom on a point is a kink
    _check_gradients(eps_of, (0.7, 0.4, 1.2, 0.503, 3.3, 0.3, 1e-8, 0.2))


def test_sweep_of_64_budget_vectors_compiles_once():
    @jax.jit
    @jax.vmap
    @chex.assert_max_traces(n=1)
    def sweep(mu, r, xi):
        return PA.pld_event_epsilon(canon(mu, r, xi), 1e-6, GRID)

    key = jax.random.split(jax.random.key(0), 3)
    mus = jax.random.uniform(key[0], (64,), minval=0.1, maxval=1.0)
    rs = jax.random.uniform(key[1], (64,), minval=0.1, maxval=0.6)
    xis = jax.random.uniform(key[2], (64,), minval=0.2, maxval=1.5)
    out = np.asarray(sweep(mus, rs, xis))
    out2 = np.asarray(sweep(mus * 1.01, rs, xis))  # new values, same trace
    assert np.all(np.isfinite(out)) and np.all(out2 >= out - 1e-4)
    one = float(PA.pld_event_epsilon(canon(mus[5], rs[5], xis[5]), 1e-6, GRID))
    assert out[5] == pytest.approx(one, rel=1e-5)


@pytest.mark.slow  # compiles a traced composition of every event (about 18 s on two cores)
def test_traced_invalid_parameters_give_nan():
    fn = jax.jit(lambda mu: PA.pld_event_epsilon(canon(mu, 0.2, 1.0), 1e-6, GRID))
    assert math.isnan(float(fn(-1.0)))
    assert math.isnan(float(jax.grad(fn)(-1.0)))
    assert math.isfinite(float(fn(0.3)))
    with pytest.raises(ValueError, match=r"events\[0\]\.event\.mu must be in \(0, inf\]"):
        PA.pld_event_epsilon(canon(-1.0, 0.2, 1.0), 1e-6, GRID)


# --------------------------------------------------------------------------- the accountants
KINDS = [G(0.8), L(0.7), R(0.5), K(1.0, 3), PU(0.6), AP(0.5, 1e-7), D(3.0, 2),
         M(np.array([1.0, 0.5]), np.array([0.5, 0.5]))]
PAIRS = [(a, b) for i, a in enumerate(KINDS) for b in KINDS[i:]]


def test_every_kind_composes_in_one_event():
    # the fast representative of the 36 pairs (tracing each pair costs a few tenths of a second)
    event = C(tuple(KINDS))
    out = jax.eval_shape(lambda ev: A.epsilon(ev, 1e-5, grid=GRID), event)
    assert out.shape == () and A.route(event) == "pld"


@pytest.mark.slow
def test_all_36_pairs_are_accountable():
    assert len(PAIRS) == 36
    for a, b in PAIRS:
        event = C((a, b))
        # traced (abstract evaluation: no compile): no NotImplementedError for any pair
        out = jax.eval_shape(lambda ev: A.epsilon(ev, 1e-5, grid=GRID), event)
        assert out.shape == ()
        assert A.route(event) in ("gdp", "pld"), (a, b)


def test_a_pair_through_the_public_epsilon():
    pair = (G(0.8), R(0.5))
    event = C(pair)
    ours = float(A.epsilon(event, 1e-5))
    singles = [float(A.epsilon(e, 1e-5)) for e in pair]
    assert max(singles) <= ours <= sum(singles) + 1e-4


@pytest.mark.slow
def test_all_36_pairs_have_finite_epsilon():
    for a, b in PAIRS:
        event = C((a, b))
        ours = float(A.epsilon(event, 1e-5))
        singles = [float(A.epsilon(e, 1e-5)) for e in (a, b)]
        assert max(singles) - 1e-6 <= ours <= sum(singles) + 1e-4, (a, b)


TABLE = [
    ("100 G(0.5) + 50 RR(1)", C((S(G(0.5), 100), S(R(rate(1.0)), 50))), 1e-6, (70.566, 70.571)),
    ("1000 Laplace(0.1)", S(L(0.1), 1000), 1e-6, (18.948, 18.950)),
    ("86 RR(1.1)", S(R(rate(1.1)), 86), 1e-5, (80.52, 80.53)),
    ("G(1) + Laplace(1) + RR(0.5)", C((G(1.0), L(1.0), R(rate(0.5)))), 1e-5, (5.6226, 5.6228)),
    ("1000 RR(0.5) + 1000 G(0.2)", C((S(R(rate(0.5)), 1000), S(G(0.2), 1000))), 1e-8,
     (233.36, 233.51)),
]


def test_table_row_4_through_the_public_epsilon():
    _, event, delta, _ = TABLE[3]
    lo, hi = dpa_epsilon(event, delta, 2.0**-8)  # LaplaceEvent: from_laplace_mechanism
    ours = float(A.epsilon(event, delta))
    assert lo - 1e-3 <= ours <= hi + 4 * 2.0**-8 + 1e-3 * hi  # float32: 4 cells + 0.1%


@pytest.mark.slow
@pytest.mark.parametrize("row", TABLE, ids=[t[0] for t in TABLE])
def test_table_rows_within_dp_accounting(x64, row):
    name, event, delta, _ = row
    h = 1e-4  # the interval of the published table
    lo, hi = dpa_epsilon(event, delta, h)
    ours = float(A.epsilon(event, delta, grid=P.PldGrid(h, -8.0, 320.0)))
    assert lo - 1e-6 * (1 + hi) <= ours <= hi + 1e-6 * (1 + hi), (name, lo, ours, hi)
