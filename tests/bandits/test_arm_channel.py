"""The shown-arm channel of epsilon-greedy, counted exactly from the integer widths it uses.

For a set of budgets (float32 and x64; arm-specific vectors including (1, 16), (1, 17) and one
just inside the refusal bound; constant and capped budgets) the widths that the step decides on
(``budgets.release_widths``) give every probability P(shown arm j | greedy arm g) as an exact
rational: W_j / 2^32 for j != g, (R + W_g) / 2^32 for j = g, R = 2^32 - sum_j W_j. Against
the nominal law computed in 60-digit mpmath from the float budgets (a_j = 1 / (e^{xi_j} - 1),
S = sum_j a_j: P(j | g) = (a_j + [j = g]) / (1 + S)) and the claim (``privacy_event``):

* the realised epsilon (the largest log ratio over arms and pairs of greedy arms) is at most
  the claim's epsilon at delta = 0 and at most max_j xi_j;
* each probability of a shown arm other than the greedy one is within 2^-32 above its nominal
  value; the greedy arm's is below its nominal value by less than (K - 1) 2^-32 (the other
  arms' ceilings, on the side of more privacy);
* the claim's delta(e) at e below the largest budget equals the realised profile
  max_{g, g'} sum_j max(0, P(j | g) - e^e P(j | g')) within its rounding, on the upper side:
  K-RR's (max_j xi_j, K) or binary RR's (max_j xi_j, 2) profile is far from it (the test
  fails on either reading);
* a budget vector whose smallest arm probability is below 2^-32, e.g. (0.5, 1, 22), is refused.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.accounting import delta, epsilon
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.environment import arm_mask
from ldpjax.bandits.epsilon_greedy import release_arm
from ldpjax.engine import product_grid

mp.mp.dps = 60
TWO32 = 2**32


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    with jax.enable_x64(request.param == "float64"):
        yield request.param


def _near_bound():
    """(1, x) with x just below the budget whose arm probability is exactly 2^-32."""
    a0 = 1 / mp.expm1(1)
    # a / (1 + a0 + a) = 2^-32  <=>  a = 2^-32 (1 + a0) / (1 - 2^-32)
    a = mp.mpf(2) ** -32 * (1 + a0) / (1 - mp.mpf(2) ** -32)
    return [1.0, float(mp.log1p(1 / a)) - 1e-4]


# K = 4 and a third budget near the bound compile their own kernels: behind ``slow``
ARM_BUDGETS = [[1.0, 16.0], [1.0, 17.0], [0.5, 1.0, 2.0], _near_bound(),
               pytest.param([0.25, 3.0, 3.0, 8.0], marks=pytest.mark.slow),
               pytest.param([0.5, 1.0, 21.0], marks=pytest.mark.slow)]


def _name(budgets):
    return ",".join(f"{x:g}" for x in budgets)


def _env(k):
    return bandits.make_environment(np.linspace(0.1, 0.5, k))


# compiled as the step uses it (run eagerly, its double-word arithmetic would compile op by op)
_release_widths = jax.jit(budgets_lib.release_widths)


def _widths(params, clock=10):
    k = int(params.num_arms)
    mask = arm_mask(params.num_arms, params.ctr.shape[-1])
    widths, capped = _release_widths(params.strategy, params.gamma, params.arm_budgets,
                                     jnp.int32(clock), params.num_arms, mask, k)
    return [int(w) for w in np.asarray(widths)][:k], bool(capped)


def realised_law(widths, capped):
    """P(shown j | greedy g) as Fractions (not capped: R words keep the greedy arm)."""
    assert not capped
    k, rest = len(widths), TWO32 - sum(widths)
    assert rest >= 0
    return [[Fraction(w + (rest if j == g else 0), TWO32) for j, w in enumerate(widths)]
            for g in range(k)]


def nominal_law(budgets):
    rates = [1 / mp.expm1(mp.mpf(x)) for x in budgets]
    total = 1 + sum(rates)
    return [[(a + (1 if j == g else 0)) / total for j, a in enumerate(rates)]
            for g in range(len(budgets))]


def realised_epsilon(law):
    k = len(law)
    return max(mp.log(mp.mpf(law[g][j]) / mp.mpf(law[h][j]))
               for j in range(k) for g in range(k) for h in range(k) if g != h)


def realised_delta(law, e):
    k, factor = len(law), mp.exp(mp.mpf(e))
    return max(sum(max(mp.mpf(0), mp.mpf(law[g][j]) - factor * mp.mpf(law[h][j]))
                   for j in range(k)) for g in range(k) for h in range(k) if g != h)


@pytest.mark.parametrize("budgets", ARM_BUDGETS, ids=_name)
def test_arm_specific_channel_is_exact(precision, budgets):
    k = len(budgets)
    params = bandits.epsilon_greedy_params(_env(k), "arm_specific", arm_budgets=budgets)
    floats = np.asarray(params.arm_budgets, np.float64).tolist()  # the budgets as stored
    widths, capped = _widths(params)
    law, nominal = realised_law(widths, capped), nominal_law(floats)
    event = bandits.epsilon_greedy(bandits.PolicyConfig(max_arms=k)).privacy_event(params)
    assert type(event).__name__ == "WeightedRandomizedResponseEvent"
    claim = mp.mpf(float(epsilon(event, 0.0)))
    eps_real = realised_epsilon(law)
    assert eps_real <= claim and eps_real <= max(mp.mpf(x) for x in floats)
    word = mp.mpf(2) ** -32
    for g in range(k):
        for j in range(k):
            gap = mp.mpf(law[g][j]) - nominal[g][j]
            if j == g:
                assert -(k - 1) * word < gap <= 0, (g, j, float(gap / word))
            else:
                assert 0 <= gap < word, (g, j, float(gap / word))
    # the claimed profile is the realised one, rounded up (float32: a few ulps of p)
    tol = 1e-6 if precision == "float32" else 1e-14
    top = max(floats)
    for e in (0.0, 0.3, 0.5 * top, 0.9 * top, top - 0.05):
        e = float(np.asarray(e, precision))  # the eps the accountant evaluates at
        real = realised_delta(law, e)
        claimed = mp.mpf(float(delta(event, e)))
        assert real <= claimed <= real + tol, (e, float(real), float(claimed))


def test_the_claim_is_neither_krr_reading():
    # (1, 16): at e = 0.5 the channel's delta is about 0.632; K-RR (16, 2) says 1.0
    params = bandits.epsilon_greedy_params(_env(2), "arm_specific", arm_budgets=[1.0, 16.0])
    law = realised_law(*_widths(params))
    event = bandits.epsilon_greedy(bandits.PolicyConfig()).privacy_event(params)
    real = float(realised_delta(law, 0.5))
    krr = (math.exp(16) - math.exp(0.5)) / (1 + math.exp(16))  # (max xi, 2) = (max xi, K) here
    assert abs(float(delta(event, 0.5)) - real) < 1e-6 and abs(krr - real) > 0.3


@pytest.mark.parametrize("budgets", [[0.5, 1.0, 22.0], [1.0, _near_bound()[1] + 1e-3]])
def test_budgets_below_the_resolution_are_refused(precision, budgets):
    env = _env(len(budgets))
    with pytest.raises(ValueError, match="2\\^-32"):
        bandits.epsilon_greedy_params(env, "arm_specific", arm_budgets=budgets)
    # the engine's concrete check refuses it too (a grid point built around the boundary)
    alg = bandits.epsilon_greedy(bandits.PolicyConfig(max_arms=len(budgets)))
    params = bandits.epsilon_greedy_params(env, "arm_specific", arm_budgets=[1.0] * len(budgets))
    params = params._replace(arm_budgets=jnp.asarray(budgets, params.ctr.dtype))
    with pytest.raises(ValueError, match="arm_budgets"):
        alg.validate(params, None)


@pytest.mark.parametrize("strategy", ["constant", "dynamic"])
def test_uniform_strategies_never_exceed_gamma(precision, strategy):
    # every visitor's width is at least the exact ceiling at gamma (mpmath), so its realised
    # epsilon is at most gamma; the constant strategy's is that ceiling (within one word)
    k, gamma = 3, 2.5
    params = bandits.epsilon_greedy_params(_env(k), strategy, gamma)
    exact = int(mp.ceil(mp.mpf(TWO32) / (k - 1 + mp.exp(mp.mpf(float(params.gamma))))))
    for clock in (1, 2, 5, 50, 10_000, 10**7):
        widths, capped = _widths(params, clock)
        assert len(set(widths)) == 1 and widths[0] >= exact
        if strategy == "constant":
            assert widths[0] <= exact + 1
        if not capped:
            q = widths[0]
            assert mp.log(mp.mpf(TWO32 - (k - 1) * q) / q) <= mp.mpf(float(params.gamma))


def test_mixed_grid_claims_the_realised_channel_everywhere():
    env = _env(3)
    base = bandits.epsilon_greedy_params(env, "constant", 1.5, arm_budgets=[0.5, 1.0, 2.0])
    grid = product_grid(base, strategy=jnp.asarray([0, 3], jnp.int32))
    event = bandits.epsilon_greedy(bandits.PolicyConfig(max_arms=3)).privacy_event(grid)
    assert type(event).__name__ == "WeightedRandomizedResponseEvent"
    eps = np.asarray(epsilon(event, 0.0), np.float64)
    # each point: its realised epsilon <= the claim <= its nominal budget (+ rounding)
    for i, point in enumerate((0, 3)):
        params = jax.tree_util.tree_map(lambda x, i=i: x[i], grid)
        widths, capped = _widths(params)
        real = realised_epsilon(realised_law(widths, capped))
        nominal = 1.5 if point == 0 else 2.0
        assert real <= mp.mpf(eps[i]) <= nominal * (1 + 1e-5)  # rounded up: a few ulps


def test_padding_arms_do_not_enter_the_claim():
    # 2 arms of 3 columns: the padding column's budget (9) is not a shown arm
    env = bandits.make_environment([0.3, 0.2, 0.1], num_arms=2)
    params = bandits.epsilon_greedy_params(env, "arm_specific", arm_budgets=[0.5, 2.0, 9.0])
    event = bandits.epsilon_greedy(bandits.PolicyConfig(max_arms=3)).privacy_event(params)
    widths, capped = _widths(params)
    assert len(widths) == 2
    real = realised_epsilon(realised_law(widths, capped))
    assert real <= mp.mpf(float(epsilon(event, 0.0))) <= 2.0 * (1 + 1e-5)


def test_release_shows_each_arm_on_its_range():
    params = bandits.epsilon_greedy_params(_env(3), "arm_specific", arm_budgets=[0.5, 1.0, 2.0])
    widths, capped = _widths(params)
    mask = np.ones(3, bool)
    ends = np.cumsum(widths).tolist()
    starts = [0] + ends[:-1]
    words, expect = [], []
    for j, (a, b) in enumerate(zip(starts, ends, strict=True)):
        words += [[a, 0], [b - 1, 0]]
        expect += [j, j]
    words += [[ends[-1], 0], [TWO32 - 1, 0]]  # the greedy arm's words
    expect += [1, 1]
    values = jnp.asarray([0.1, 0.9, 0.2])  # greedy arm 1, no ties
    w = jnp.asarray(widths, jnp.uint32)
    arms = [int(release_arm(jnp.asarray(x, jnp.uint32), values, mask, w, capped, 3,
                            jnp.float32)[0]) for x in words]
    assert arms == expect


def test_claim_gradient_is_that_of_the_largest_budget():
    # pure epsilon of the channel is max_j xi_j: d/d xi = (0, 1)
    params = bandits.epsilon_greedy_params(_env(2), "arm_specific", arm_budgets=[1.0, 3.0])
    alg = bandits.epsilon_greedy(bandits.PolicyConfig())
    grad = jax.grad(lambda b: epsilon(alg.privacy_event(params._replace(arm_budgets=b)), 0.0))(
        params.arm_budgets)
    assert np.allclose(np.asarray(grad), [0.0, 1.0], atol=1e-4)
