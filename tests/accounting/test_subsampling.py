"""Amplification by subsampling: Poisson (add/remove) and without replacement (replace-one).

References: dp_accounting's ``PLDAccountant`` (``PoissonSampledDpEvent`` of a Gaussian,
ADD_OR_REMOVE_ONE) and, for a randomized-response pair, dp_accounting's PLD of the two
subsampled laws written out by hand (``from_two_probability_mass_functions``: remove
(q P + (1 - q) Q, Q), add (Q, q P + (1 - q) Q)); the closed forms log(1 + q (e^eps - 1)) and,
for one round without replacement, q delta(log(1 + (e^eps' - 1) / q)) (SciPy); dp_accounting's
RDP accountant bounds rounds without replacement from above.

Tolerance against dp_accounting at interval h (float64): its pessimistic PLD and ours are both
connect-the-dots of the subsampled pair; ours splits the inner PLD's points again (a second
rounding of at most one cell per release), so ours lies within 1e-4 (1 + eps) of its
pessimistic value and above its optimistic one.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import pytest
from scipy.stats import norm

from ldpjax.accounting import accountant as A
from ldpjax.accounting import composition as C
from ldpjax.accounting import events as E
from ldpjax.accounting import pld as P
from ldpjax.accounting import pld_accountant as PA
from ldpjax.accounting.subsampling import PoissonSampledEvent, SampledWithoutReplacementEvent

H = 2.0**-12
GRID = P.PldGrid(H, -8.0, 24.0 - H)


def _dpa_poisson_gaussian(sigma, q, rounds, delta):
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=H)
    acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)),
                                        rounds))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("sigma, q, rounds, delta", [(1.0, 0.1, 100, 1e-5), (0.8, 0.5, 10, 1e-5)])
def test_poisson_gaussian_matches_dp_accounting(x64, sigma, q, rounds, delta):
    pytest.importorskip("dp_accounting")
    ref = _dpa_poisson_gaussian(sigma, q, rounds, delta)
    event = C.SelfComposedEvent(PoissonSampledEvent(E.GaussianEvent(1 / sigma), q), rounds)
    ours = float(A.epsilon(event, delta, grid=GRID))
    assert ref - 1e-4 * (1 + ref) <= ours <= ref + 1e-4 * (1 + ref)


@pytest.mark.slow  # two PLD compositions per dtype (6-7 s on two cores)
def test_poisson_needs_the_inner_lower_law(x64):
    # a grid whose lower end (-1) holds the sampled release but not the inner Gaussian's
    # lower law (Q-mass down to about -4): the inner PLD gets its own [-upper, upper]
    pytest.importorskip("dp_accounting")
    ref = _dpa_poisson_gaussian(2.0, 0.01, 100, 1e-6)
    event = C.SelfComposedEvent(PoissonSampledEvent(E.GaussianEvent(0.5), 0.01), 100)
    ours = float(A.epsilon(event, 1e-6, grid=P.PldGrid(H, -1.0, 3.0 - H)))
    assert ref - 1e-4 * (1 + ref) <= ours <= ref + 1e-4 * (1 + ref)


@pytest.mark.slow
@pytest.mark.parametrize("sigma, q, rounds, delta", [(2.0, 0.01, 1000, 1e-6), (0.6, 0.02, 3000, 1e-7)])
def test_poisson_gaussian_many_rounds(x64, sigma, q, rounds, delta):
    pytest.importorskip("dp_accounting")
    ref = _dpa_poisson_gaussian(sigma, q, rounds, delta)
    event = C.SelfComposedEvent(PoissonSampledEvent(E.GaussianEvent(1 / sigma), q), rounds)
    ours = float(A.epsilon(event, delta))
    assert ref - 1e-4 * (1 + ref) <= ours <= ref + 1e-4 * (1 + ref)


def _dpa_sampled_rr(eps0, q, rounds, delta, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as PLD

    up = math.exp(eps0) / (1 + math.exp(eps0))
    p_law = {0: math.log(up), 1: math.log(1 - up)}  # with the record
    q_law = {0: math.log(1 - up), 1: math.log(up)}  # without it
    mixed = {o: math.log(q * math.exp(p_law[o]) + (1 - q) * math.exp(q_law[o])) for o in (0, 1)}
    pld = PLD.from_two_probability_mass_functions(
        log_probability_mass_function_lower=q_law, log_probability_mass_function_upper=mixed,
        pessimistic_estimate=pessimistic, value_discretization_interval=H, symmetric=False)
    return pld.self_compose(rounds).get_epsilon_for_delta(delta)


@pytest.mark.parametrize("eps0, q, rounds, delta", [(1.0, 0.1, 50, 1e-6), (2.0, 0.3, 8, 1e-5)])
def test_poisson_pure_dp_matches_the_hand_built_pair(x64, eps0, q, rounds, delta):
    pytest.importorskip("dp_accounting")
    lo = _dpa_sampled_rr(eps0, q, rounds, delta, False)
    hi = _dpa_sampled_rr(eps0, q, rounds, delta, True)
    event = C.SelfComposedEvent(PoissonSampledEvent(E.PureDpEvent(eps0), q), rounds)
    ours = float(A.epsilon(event, delta, grid=GRID))
    assert lo - 1e-6 <= ours <= hi + 1e-4 * (1 + hi), (lo, ours, hi)


def test_closed_form_views():
    for q in (0.0, 0.05, 1.0):
        for eps in (0.5, 2.0):
            expected = math.log1p(q * math.expm1(eps))
            sampled = PoissonSampledEvent(E.LaplaceEvent(eps), q)
            assert float(A.pure_epsilon(sampled)) == pytest.approx(expected, rel=1e-6, abs=1e-7)
            without = SampledWithoutReplacementEvent(E.LaplaceEvent(eps), int(q * 20), 20)
            assert float(A.pure_epsilon(without)) == pytest.approx(expected, rel=1e-6, abs=1e-7)
    pair = PoissonSampledEvent(E.ApproxDpEvent(1.0, 1e-5), 0.2).approx_dp(jnp.result_type(float))
    assert float(pair[1]) == pytest.approx(2e-6)


def test_without_replacement_one_round_is_the_joint_convexity_bound(x64):
    # delta'(eps') = q delta(log(1 + (e^eps' - 1) / q)) for eps' >= 0 (grid points: exact)
    mu, q = 1.0, 0.25
    event = SampledWithoutReplacementEvent(E.GaussianEvent(mu), 25, 100)
    for eps_p in (0.0, 0.25, 0.5, 1.0):
        e = math.log1p(math.expm1(eps_p) / q)
        ref = q * (norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2))
        ours = float(A.delta(event, eps_p, grid=GRID))
        # the inner PLD's points map off the grid and are split again: up to one cell of slack
        assert ref <= ours <= ref * (1 + 5e-3) + 1e-12, (eps_p, ref, ours)


@pytest.mark.slow  # two PLD compositions per dtype (6-7 s on two cores)
def test_without_replacement_rounds_below_rdp(x64):
    pytest.importorskip("dp_accounting")
    import dp_accounting as dpa

    sigma, m, n, rounds, delta = 1.0, 10, 100, 50, 1e-5
    rdp = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dpa.SelfComposedDpEvent(
        dpa.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(sigma)), rounds))
    event = C.SelfComposedEvent(SampledWithoutReplacementEvent(E.GaussianEvent(1 / sigma), m, n),
                                rounds)
    ours = float(A.epsilon(event, delta, grid=GRID))
    poisson = float(A.epsilon(C.SelfComposedEvent(
        PoissonSampledEvent(E.GaussianEvent(1 / sigma), m / n), rounds), delta, grid=GRID))
    assert ours <= rdp.get_epsilon(delta)
    assert ours >= poisson * 0.5  # same order as the Poisson claim, not a vacuous value


def test_checks_and_traced_values():
    with pytest.raises(ValueError, match=r"^probability must be in \[0, 1\]"):
        A.epsilon(PoissonSampledEvent(E.GaussianEvent(1.0), 1.5), 1e-5)
    with pytest.raises(ValueError, match=r"^event\.mu must be in"):
        A.epsilon(PoissonSampledEvent(E.GaussianEvent(-1.0), 0.5), 1e-5)
    with pytest.raises(ValueError, match="sample_size must be in"):
        A.epsilon(SampledWithoutReplacementEvent(E.GaussianEvent(1.0), 11, 10), 1e-5)
    with pytest.raises(NotImplementedError, match="composition of Gaussian releases"):
        A.epsilon(PoissonSampledEvent(C.ComposedEvent((E.GaussianEvent(1.0), E.LaplaceEvent(1.0))),
                                      0.5), 1e-5, grid=GRID)
    fn = jax.jit(lambda q: A.epsilon(PoissonSampledEvent(E.GaussianEvent(1.0), q), 1e-5,
                                     grid=PA.DEFAULT_GRID))
    assert math.isnan(float(fn(1.5)))
    assert 0.0 < float(fn(0.2)) < float(A.epsilon(E.GaussianEvent(1.0), 1e-5))
    # q = 0: nothing released about the record; q = 1: the release itself
    assert float(A.epsilon(PoissonSampledEvent(E.GaussianEvent(1.0), 0.0), 1e-5, grid=GRID)) == 0.0
    whole = float(A.epsilon(PoissonSampledEvent(E.GaussianEvent(1.0), 1.0), 1e-5, grid=GRID))
    assert whole == pytest.approx(float(A.epsilon(E.GaussianEvent(1.0), 1e-5)), abs=2 * H)
