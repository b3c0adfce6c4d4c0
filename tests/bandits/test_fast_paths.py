"""Fast path vs sampling path of per-visitor epsilon-greedy (issue 10 item 2).

The fast path draws one uniform for the K-RR report (explore? which arm? ties from the
mechanism's spare uniform) and one for the click; the sampling path draws every choice
separately. They must be equal in distribution. Tolerances:

* one-step laws (crafted state with tied greedy arms): Pearson chi-square of the counts of
  n = 40,000 draws against the exact law, df = K - 1 = 2, so P(chi2 > 25) = e^{-12.5} = 4e-6;
  the two paths against each other: the 2 x K homogeneity chi-square, also df = 2, same bound;
* whole runs (T = 40, J = 2, 2,000 seeds per path, independent keys): two-sample z of the mean
  shows of each arm and of the mean clicks, |z| <= 4.5 (P = 7e-6 each by the CLT; 4 statistics).

A wrong tie-break (e.g. always the lowest index), a shared uniform between report and click or a
mis-scaled spare all move these laws by far more than the bounds (checked for the tie-break: it
puts (1 - eps) on arm 0: chi-square about 6,700).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.bandits.state import BanditState
from ldpjax.engine import make_key, record, simulate

N = 40_000
CHI2_DF2 = 25.0  # P(chi2_2 > 25) = exp(-12.5)
ENV = bandits.make_environment([[0.5, 0.3, 0.1], [0.1, 0.2, 0.6]], segment_probs=[0.6, 0.4])


def tied_state():
    """Segment 0: arms 0 and 1 tied at Q = 0.5 (100 shows each), arm 2 at 0.1."""
    shows = jnp.full((2, 3), 100, jnp.int32)
    clicks = jnp.asarray([[50, 50, 10], [10, 20, 60]], jnp.int32)
    return BanditState(shows, clicks, jnp.full((2,), 300, jnp.int32), jnp.asarray(600, jnp.int32))


_KERNELS = {}


def _one_step_kernel(fast):
    """One compiled (vmapped over keys) step per path, shared by both strategies: the params
    are a traced argument (a jit per call compiled the same step four times)."""
    if fast not in _KERNELS:
        config = bandits.PolicyConfig(num_segments=2, max_arms=3, replay_segments=True,
                                      fast=fast)
        alg = bandits.epsilon_greedy(config)
        _KERNELS[fast] = jax.jit(jax.vmap(
            lambda p, s, k: alg.step(p, s, jnp.int32(0), k)[1], in_axes=(None, None, 0)))
    return _KERNELS[fast]


def one_step_counts(params, fast, seed):
    keys = jax.random.split(make_key(seed), N)
    outs = _one_step_kernel(fast)(params, tied_state(), keys)
    return np.bincount(np.asarray(outs.arm), minlength=3), outs


def chi2(counts, probs):
    expected = N * np.asarray(probs)
    return float(np.sum((counts - expected) ** 2 / expected))


def homogeneity_chi2(a, b):
    table = np.stack([a, b]).astype(float)
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    return float(np.sum((table - expected) ** 2 / expected))


@pytest.mark.parametrize("strategy, gamma, budgets", [
    ("constant", 1.0, None),
    ("arm_specific", 1.0, [0.5, 1.0, 2.0]),
])
def test_one_step_law_with_ties_both_paths(strategy, gamma, budgets):
    params = bandits.epsilon_greedy_params(ENV, strategy, gamma, arm_budgets=budgets)
    if strategy == "constant":
        eps, w = 3 / (3 + math.exp(gamma) - 1), np.full(3, 1 / 3)
    else:
        rates = 1 / np.expm1(np.asarray(budgets))
        eps, w = rates.sum() / (1 + rates.sum()), rates / rates.sum()
    # greedy uniform among the tied arms 0 and 1
    law = eps * w + (1 - eps) * np.array([0.5, 0.5, 0.0])
    fast, out_fast = one_step_counts(params, True, 1)
    slow, out_slow = one_step_counts(params, False, 2)
    assert chi2(fast, law) <= CHI2_DF2
    assert chi2(slow, law) <= CHI2_DF2
    assert homogeneity_chi2(fast, slow) <= CHI2_DF2
    # the reported greedy arm is uniform on the ties: Binomial(N, 1/2), 5 sd = 5 sqrt(N) / 2
    for out in (out_fast, out_slow):
        greedy = np.asarray(out.greedy_arm)
        assert set(np.unique(greedy)) == {0, 1}
        assert abs(np.sum(greedy == 0) - N / 2) <= 5 * math.sqrt(N) / 2


def _random_words(jaxpr) -> list[int]:
    """Sizes of every random_bits draw in a jaxpr, sub-jaxprs (pjit, cond, ...) included."""
    sizes = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "random_bits":
            sizes.append(int(np.prod(eqn.outvars[0].aval.shape)))
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    sizes.extend(_random_words(inner))
    return sizes


def test_fast_path_draws_one_draw_of_three_words_per_visitor():
    params = bandits.epsilon_greedy_params(bandits.make_environment([0.3, 0.2, 0.1]), "dynamic")
    alg = bandits.epsilon_greedy(bandits.PolicyConfig(max_arms=3))
    state = alg.init(params, make_key(0))
    jaxpr = jax.make_jaxpr(lambda k: alg.step(params, state, None, k))(make_key(1))
    # one draw of three uint32 words: two decide the exact K-RR report, one the click
    assert _random_words(jaxpr.jaxpr) == [3]
    # the sampling path draws more (segment, K tie uniforms, report, click)
    slow = bandits.epsilon_greedy(bandits.PolicyConfig(max_arms=3, fast=False))
    jaxpr = jax.make_jaxpr(lambda k: slow.step(params, state, None, k))(make_key(1))
    assert sum(_random_words(jaxpr.jaxpr)) > 3


def _runs(fast, seed, strategy, seeds, horizon):
    config = bandits.PolicyConfig(num_segments=2, max_arms=3, fast=fast)
    rec = record.combine(clicks=record.total("click"), spend=bandits.max_spend())
    params = bandits.epsilon_greedy_params(ENV, strategy, 1.0)
    out = simulate(bandits.epsilon_greedy(config), params, make_key(seed), horizon,
                   num_seeds=seeds, record=rec, hints=bandits.epsilon_greedy_hints(config))
    return (np.asarray(out.state.shows.sum(1), float), np.asarray(out.record["clicks"], float),
            np.asarray(out.state.visits))


def _two_sample_z(a, b):
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return abs(a.mean() - b.mean()) / se


@pytest.mark.parametrize("strategy", ["constant", "dynamic"])
def test_runs_agree_in_distribution(strategy):
    seeds, horizon = 2000, 40
    shows_f, clicks_f, visits_f = _runs(True, 3, strategy, seeds, horizon)
    shows_s, clicks_s, visits_s = _runs(False, 4, strategy, seeds, horizon)
    for arm in range(3):
        assert _two_sample_z(shows_f[:, arm], shows_s[:, arm]) <= 4.5
    assert _two_sample_z(clicks_f, clicks_s) <= 4.5
    # iid segments follow segment_probs on both paths: visits to segment 0 per run are
    # Binomial(40, 0.6), sd sqrt(40 * .6 * .4) = 3.10; the mean of 2000 runs has sd 0.069,
    # 5 sd = 0.35 (a swapped or uniform segment law moves it by 4 to 8)
    for visits in (visits_f, visits_s):
        assert np.all(visits.sum(1) == horizon)
        assert visits[:, 0].mean() == pytest.approx(0.6 * horizon, abs=5 * 3.10 / math.sqrt(seeds))


@pytest.mark.slow
def test_runs_agree_in_distribution_long():
    seeds, horizon = 20_000, 400
    shows_f, clicks_f, _ = _runs(True, 5, "dynamic", seeds, horizon)
    shows_s, clicks_s, _ = _runs(False, 6, "dynamic", seeds, horizon)
    for arm in range(3):
        assert _two_sample_z(shows_f[:, arm], shows_s[:, arm]) <= 4.5
    assert _two_sample_z(clicks_f, clicks_s) <= 4.5
