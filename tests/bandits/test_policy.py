"""The private epsilon-greedy mechanism, its accounting and the benchmark policies.

Statistical tests use fixed keys; every tolerance is derived from the sampling error in a
comment so that the tests cannot flake and could fail if the mechanism were wrong.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.accounting import NoPrivacyEvent, compose_parallel, compose_sequential, krr_budget
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.state import BanditState
from ldpjax.engine import make_key, product_grid, record, simulate

MBA_CTR = [0.324, 0.295]


def crafted_state(ctr_hat, dtype=jnp.float32, t=100):
    """A state whose per-segment empirical CTRs are ``ctr_hat`` (100 shows per arm)."""
    ctr_hat = np.asarray(ctr_hat)
    shows = np.full(ctr_hat.shape, 100, np.int32)
    return BanditState(jnp.asarray(shows), jnp.asarray(np.round(ctr_hat * 100), jnp.int32),
                       jnp.full((ctr_hat.shape[0],), t, jnp.int32), jnp.asarray(t, jnp.int32))


_SHOWN_KERNELS = {}


def _shown_kernel(config):
    """One compiled (vmapped over keys) policy step per config, shared by every audit test:
    params, state and segment are traced arguments, so changing them does not recompile."""
    if config not in _SHOWN_KERNELS:
        alg = bandits.epsilon_greedy(config)
        _SHOWN_KERNELS[config] = jax.jit(jax.vmap(
            lambda p, s, seg, k: alg.step(p, s, seg, k)[1], in_axes=(None, None, None, 0)))
    return _SHOWN_KERNELS[config]


def shown_arm_counts(params, config, state, segment, n, seed):
    keys = jax.random.split(make_key(seed), n)
    outs = _shown_kernel(config)(params, state, jnp.int32(segment), keys)
    return np.bincount(np.asarray(outs.arm), minlength=config.max_arms), outs


# Two segments with different greedy arms (arm 0 in segment 0, arm 2 in segment 1).
ENV3 = bandits.make_environment([[0.5, 0.2, 0.1], [0.1, 0.2, 0.6]])
STATE3 = crafted_state([[0.5, 0.2, 0.1], [0.1, 0.2, 0.6]])
CONFIG3 = bandits.PolicyConfig(num_segments=2, max_arms=3, replay_segments=True)
N = 40_000


def test_shown_arm_distribution_matches_krr():
    gamma = 1.0
    params = bandits.epsilon_greedy_params(ENV3, "constant", gamma)
    counts, outs = shown_arm_counts(params, CONFIG3, STATE3, 0, N, 1)
    keep = math.exp(gamma) / (2 + math.exp(gamma))
    other = 1 / (2 + math.exp(gamma))
    expected = np.array([keep, other, other])
    # each frequency of n = 40000 draws: sd = sqrt(p (1 - p) / n) <= 0.0025; 5 sd = 0.0125
    sd = np.sqrt(expected * (1 - expected) / N)
    assert np.all(np.abs(counts / N - expected) <= 5 * sd)
    assert np.all(np.asarray(outs.greedy_arm) == 0)
    assert np.allclose(np.asarray(outs.spend), gamma)
    assert np.allclose(np.asarray(outs.explore_prob), 3 / (3 + math.exp(gamma) - 1), rtol=1e-6)


def _audit(params, xi_expected):
    counts0, _ = shown_arm_counts(params, CONFIG3, STATE3, 0, N, 2)
    counts1, _ = shown_arm_counts(params, CONFIG3, STATE3, 1, N, 3)
    emp = float(bandits.empirical_epsilon(counts0, counts1))
    # delta method: sd(log p_hat) = sqrt((1 - p) / (n p)); the log ratio of two independent
    # frequencies has sd = sqrt(sum of both). With p >= 0.05 and n = 40000 each sd <= 0.022;
    # we allow 5 sd of the worst arm.
    p0, p1 = counts0 / N, counts1 / N
    sd = np.sqrt((1 - p0) / (N * p0) + (1 - p1) / (N * p1))
    tol = 5 * float(np.max(sd))
    assert emp <= xi_expected + tol  # never leaks more than the accounted xi
    assert emp >= xi_expected - tol  # and the accounting is tight (the test can fail)
    return emp


@pytest.mark.parametrize("strategy, gamma, t, xi", [
    ("constant", 1.0, 100, 1.0),
    ("constant", 0.3, 100, 0.3),
    ("capped", 5.0, 100, None),  # cap not binding at t = 101: xi = dynamic xi
    ("capped", 0.8, 100, 0.8),  # cap binding
])
def test_audit_empirical_epsilon_never_exceeds_xi(strategy, gamma, t, xi):
    params = bandits.epsilon_greedy_params(ENV3, strategy, gamma)
    if xi is None:
        eps = (3 * math.log(t + 1) / (t + 1)) ** (1 / 3)
        xi = math.log(1 - 3 + 3 / eps)
        assert xi < gamma
    _audit(params, xi)


def test_audit_arm_specific_budgets():
    budgets = np.array([0.5, 1.0, 2.0])
    params = bandits.epsilon_greedy_params(ENV3, "arm_specific", 2.0, arm_budgets=budgets)
    counts0, _ = shown_arm_counts(params, CONFIG3, STATE3, 0, N, 4)
    counts1, _ = shown_arm_counts(params, CONFIG3, STATE3, 1, N, 5)
    p0, p1 = counts0 / N, counts1 / N
    # arm 0 (greedy in segment 0) has ratio e^{xi_0}; arm 2 (greedy in segment 1) e^{xi_2};
    # arm 1 is never greedy here: ratio 1. sd of each log ratio as in _audit.
    sd = np.sqrt((1 - p0) / (N * p0) + (1 - p1) / (N * p1))
    ratios = np.abs(np.log(p0 / p1))
    assert ratios[0] == pytest.approx(0.5, abs=5 * sd[0])
    assert ratios[2] == pytest.approx(2.0, abs=5 * sd[2])
    assert ratios[1] == pytest.approx(0.0, abs=5 * sd[1])
    assert float(bandits.empirical_epsilon(counts0, counts1)) <= 2.0 + 5 * sd.max()


# jitted: one compilation per shape below instead of ~25 eager op kernels per shape
_arm_specific = jax.jit(bandits.arm_specific_exploration)
_mechanism_epsilon = jax.jit(bandits.mechanism_epsilon)


def test_arm_specific_exploration_example_and_exact_privacy():
    eps, w, spend = _arm_specific(np.array([0.5, 1.0, 2.0]))
    assert float(eps) == pytest.approx(0.695, abs=5e-4)
    assert np.allclose(np.asarray(w), [0.676, 0.255, 0.069], atol=5e-4)
    assert float(spend) == 2.0
    assert float(_mechanism_epsilon(eps, w)) == pytest.approx(2.0, rel=1e-5)
    # equal budgets reduce to K-RR: eps = K / (K + e^xi - 1), uniform weights
    eps, w, spend = _arm_specific(np.full(4, 1.3))
    assert float(eps) == pytest.approx(4 / (4 + math.exp(1.3) - 1), rel=1e-6)
    assert np.allclose(np.asarray(w), 0.25)
    # a zero budget forces eps = 1 and all exploration onto that arm
    eps, w, _ = _arm_specific(np.array([0.0, 1.0]))
    assert float(eps) == 1.0 and np.allclose(np.asarray(w), [1.0, 0.0])


# one compilation for every (code, gamma, clock) below: eagerly, each of the 20 calls
# dispatches the whole formula op by op (~10x slower)
_exploration = jax.jit(budgets_lib.exploration, static_argnames=("init_constant",))


def test_strategy_spend_and_exploration_formulas():
    mask = jnp.ones(2, bool)
    for clock in (1, 2, 3, 50, 10_000):
        eps_dyn = 1.0 if clock <= 2 else min(1.0, (2 * math.log(clock) / clock) ** (1 / 3))
        xi_dyn = math.log(1 - 2 + 2 / eps_dyn)
        for code, gamma, eps_ref, xi_ref in [
            (0, 1.5, 2 / (1 + math.exp(1.5)), 1.5),
            (1, math.inf, eps_dyn, xi_dyn),  # uncapped: the non-private decay (gamma = inf)
            (2, 1.5, max(eps_dyn, 2 / (1 + math.exp(1.5))), min(xi_dyn, 1.5)),
            (2, math.inf, eps_dyn, xi_dyn),  # dynamic at gamma = inf is the uncapped decay
        ]:
            eps, w, spend = _exploration(code, gamma, jnp.zeros(2), clock, 2, mask, 2)
            assert float(eps) == pytest.approx(eps_ref, rel=1e-5)
            assert float(spend) == pytest.approx(xi_ref, rel=1e-5, abs=1e-6)
            assert float(_mechanism_epsilon(eps, w)) == pytest.approx(
                xi_ref, rel=1e-4, abs=1e-5)


def test_posterior_odds_bound():
    assert float(bandits.posterior_odds_bound(0.25, math.log(3))) == pytest.approx(0.75)
    p = float(bandits.posterior_probability_bound(0.2, 1.0))
    assert p == pytest.approx(0.2 * math.e / (0.2 * math.e + 0.8))
    # Bayes with the K-RR likelihoods: two segments, greedy arms 0 and 1, K = 2, xi = 1.
    # P(show 0 | s0) = e/(1+e), P(show 0 | s1) = 1/(1+e): posterior odds = prior odds * e.
    prior = 0.3
    post = prior * math.e / (1 + math.e) / (prior * math.e / (1 + math.e) + (1 - prior) / (1 + math.e))
    assert post == pytest.approx(float(bandits.posterior_probability_bound(prior, 1.0)))
    with pytest.raises(ValueError, match="^prior_odds "):
        bandits.posterior_odds_bound(-1.0, 1.0)
    with pytest.raises(ValueError, match="^xi "):
        bandits.posterior_odds_bound(1.0, -1.0)


# ----------------------------------------------------------------------------- simulations
GAMMAS = [0.05, 0.5, 1.0, 3.0, 5.0]
T_MBA = 10_000
# 20 seeds in the fast suite (the simulation's run time is what costs: 10 grid points x
# seeds x 1e4 steps); the slow test repeats the bound check with the paper-size 100 seeds.
# Tolerances below are in units of the sampling error of the mean, so they scale with seeds.
SEEDS = 20
SEEDS_SLOW = 100


def _mba_runs(seeds):
    env = bandits.make_environment(MBA_CTR)
    config = bandits.PolicyConfig()
    base = bandits.epsilon_greedy_params(env, "capped", 1.0)
    params = product_grid(base, strategy=jnp.array([0, 2]), gamma=jnp.array(GAMMAS))
    rec = record.combine(regret=record.total(lambda o: o.regret), spend=bandits.max_spend())
    result = simulate(bandits.epsilon_greedy(config), params, make_key(7), T_MBA,
                      num_seeds=seeds, grid_ndim=2, record=rec,
                      hints=bandits.epsilon_greedy_hints(config))
    return result


@pytest.fixture(scope="module")
def mba_runs():
    return _mba_runs(SEEDS)


def test_no_run_spends_more_than_its_gamma(mba_runs):
    spent = mba_runs.record["spend"]  # (strategy, gamma, seed): max_t xi_t
    gammas = np.asarray(GAMMAS, np.asarray(spent).dtype)  # gamma as the run holds it (x64 too)
    assert np.all(spent <= gammas[None, :, None])
    assert np.all(spent[0] == gammas[:, None])  # constant spends exactly gamma
    # capped: min(gamma, the dynamic schedule's largest xi = xi at T)
    xi_T = float(krr_budget((2 * math.log(T_MBA) / T_MBA) ** (1 / 3), 2))
    assert np.allclose(spent[1], np.minimum(gammas, xi_T)[:, None], rtol=1e-6)
    # experiment budget = parallel composition, firm budget = sequential composition
    per_experiment = np.asarray(compose_parallel(spent, axis=-1))
    assert np.allclose(per_experiment[0], gammas)
    firm = float(compose_sequential(per_experiment[0]))
    assert firm == pytest.approx(sum(GAMMAS), rel=1e-6)


def test_bounds_upper_bound_simulated_mean_regret(mba_runs):
    _check_bounds(mba_runs, SEEDS)


@pytest.mark.slow
def test_bounds_upper_bound_simulated_mean_regret_paper_seeds():
    _check_bounds(_mba_runs(SEEDS_SLOW), SEEDS_SLOW)


def _check_bounds(runs, seeds):
    regret = runs.record["regret"]  # (strategy, gamma, seed)
    mean = regret.mean(-1)
    se = regret.std(-1) / math.sqrt(seeds)
    for form in ("appendix", "simple"):
        const = np.asarray(bandits.regret_bound_constant(np.array(GAMMAS), 2, T_MBA, form=form))
        dyn = np.asarray(bandits.regret_bound_dynamic(np.array(GAMMAS), 2, T_MBA, form=form))
        # the bound must exceed the mean even at its upper 5-sd confidence limit
        assert np.all(mean[0] + 5 * se[0] <= const)
        assert np.all(mean[1] + 5 * se[1] <= dyn)
    # the regret itself: at gamma = 0.05 exploration is 0.975: expected regret per visitor is
    # about eps/2 * gap = 0.0141; over T = 1e4: about 141. Per run the regret is gap x the
    # number of suboptimal shows, sd about gap * sqrt(T / 4) = 1.45, so with 20 seeds the
    # mean's sd is 0.33: 5% (7.1) is over 20 sd of sampling error.
    gap = 0.324 - 0.295
    eps = 2 / (1 + math.exp(0.05))
    assert mean[0, 0] == pytest.approx(T_MBA * gap * eps / 2, rel=0.05)


def test_oracle_random_and_nonprivate_baselines():
    env = bandits.make_environment(MBA_CTR)
    config = bandits.PolicyConfig()
    rec = record.combine(regret=record.total(lambda o: o.regret),
                         clicks=record.total(lambda o: o.click), spend=bandits.max_spend())
    T, n = 2000, 200
    oracle = simulate(bandits.oracle_policy(config), bandits.baseline_params(env), make_key(1), T,
                      num_seeds=n, record=rec)
    assert np.all(oracle.record["regret"] == 0)
    assert np.all(oracle.record["spend"] == 0)  # one segment: the output reveals nothing
    # clicks ~ Binomial(T, 0.324): mean of n runs has sd sqrt(T p (1-p) / n) = 1.48; 5 sd = 7.4
    assert oracle.record["clicks"].mean() == pytest.approx(T * 0.324, abs=5 * 1.48)
    rand = simulate(bandits.random_policy(config), bandits.baseline_params(env), make_key(2), T,
                    num_seeds=n, record=rec)
    # random play: regret per visitor gap/2 with prob. 1/2; total regret = gap * Bin(T, 1/2):
    # sd of the mean = gap sqrt(T/4 / n) = 0.046; 5 sd = 0.23
    gap = 0.324 - 0.295
    assert rand.record["regret"].mean() == pytest.approx(T * gap / 2, abs=0.23)
    assert np.all(rand.record["spend"] == 0)
    nonprivate = bandits.nonprivate_greedy(env)
    assert int(nonprivate.strategy) == bandits.STRATEGIES["uncapped"]
    assert float(nonprivate.gamma) == math.inf


def test_oracle_spend_is_infinite_when_segments_disagree():
    env = bandits.make_environment([[0.3, 0.1], [0.1, 0.3]])
    config = bandits.PolicyConfig(num_segments=2)
    out = simulate(bandits.oracle_policy(config), bandits.baseline_params(env), make_key(0), 50,
                   num_seeds=2, record=bandits.max_spend())
    assert np.all(np.isinf(out.record))


def test_segment_clock_and_replay():
    env = bandits.make_environment([[0.3, 0.1], [0.1, 0.3]], segment_probs=[0.75, 0.25])
    segments = jnp.asarray(np.r_[np.zeros(300, np.int32), np.ones(100, np.int32)])
    for clock in ("global", "segment"):
        config = bandits.PolicyConfig(num_segments=2, clock=clock, replay_segments=True)
        params = bandits.epsilon_greedy_params(env, "uncapped", jnp.inf)
        out = simulate(bandits.epsilon_greedy(config), params, make_key(0), 400, num_seeds=3,
                       inputs=segments, record=record.every_step(lambda o: o.spend))
        assert np.all(out.state.visits == [300, 100])
        spend = out.record[0]
        # clock c at step t: global c = t + 1; segment clock restarts for segment 1 at t = 300
        clocks = np.arange(1, 401) if clock == "global" else np.r_[np.arange(1, 301),
                                                                    np.arange(1, 101)]
        eps = np.where(clocks <= 2, 1.0, np.minimum(1, np.cbrt(2 * np.log(clocks) / clocks)))
        assert np.allclose(spend, np.log1p(2 * (1 - eps) / eps), atol=1e-5)
    # iid segments (no replay) follow segment_probs: checked on both step paths' runs in
    # test_fast_paths.py::test_runs_agree_in_distribution (a third policy compile here)


@pytest.mark.parametrize("T, n", [
    # fast: the per-visitor runs are the module's MBA sweep (same T, seeds, grid points
    # constant/1.0 and capped/3.0), so only the block policy compiles here; the 5-sd
    # tolerance of the difference scales with 1/sqrt(n)
    (T_MBA, SEEDS),
    pytest.param(5000, 200, marks=pytest.mark.slow),  # the statistical depth
])
def test_batched_policy_matches_per_visitor_policy(T, n, request):
    env = bandits.make_environment(MBA_CTR)
    rec = record.total(lambda o: o.regret)
    results = {}
    for strategy, gamma in (("constant", 1.0), ("capped", 3.0)):
        if (T, n) == (T_MBA, SEEDS):
            mba = request.getfixturevalue("mba_runs").record["regret"]
            row = {"constant": 0, "capped": 1}[strategy]  # the sweep's strategy axis: [0, 2]
            a = mba[row, GAMMAS.index(gamma)]
        else:
            a = simulate(bandits.epsilon_greedy(bandits.PolicyConfig()),
                         bandits.epsilon_greedy_params(env, strategy, gamma), make_key(11),
                         T, num_seeds=n, record=rec).record
        cfg = bandits.BlockConfig(growth=0.02)
        blocked = simulate(bandits.batched_epsilon_greedy(cfg),
                           bandits.block_params(env, strategy, gamma, T), make_key(12),
                           bandits.num_blocks(T, 0.02), num_seeds=n,
                           record=record.combine(regret=record.total(lambda o: o.regret),
                                                 visitors=record.total(lambda o: o.visitors),
                                                 spend=bandits.max_spend()))
        assert np.all(blocked.record["visitors"] == T) and np.all(blocked.state.t == T)
        assert np.all(blocked.record["spend"] <= gamma)
        b = blocked.record["regret"]
        assert a.shape == b.shape == (n,)
        # two independent means of n runs: 5 sd of the difference
        tol = 5 * math.sqrt(a.var() / n + b.var() / n)
        assert abs(a.mean() - b.mean()) <= tol
        results[strategy] = (a.mean(), b.mean(), tol)


def test_gittins_policy_runs_and_is_not_private():
    env = bandits.make_environment(MBA_CTR)
    config = bandits.GittinsConfig(bandits.PolicyConfig(), max_count=30, max_discount=0.9,
                                   num_prices=256)
    alg = bandits.gittins_policy(config)
    out = simulate(alg, bandits.gittins_params(env, config), make_key(0), 500, num_seeds=20,
                   record=record.combine(regret=record.total(lambda o: o.regret),
                                         spend=bandits.max_spend()))
    assert np.all(np.isinf(out.record["spend"]))
    assert isinstance(alg.privacy_event(bandits.gittins_params(env, config)), NoPrivacyEvent)
    assert np.all(out.state.shows.sum(-1) == 500)
    # far below random play's 500 * 0.029 / 2 = 7.25 on average
    assert out.record["regret"].mean() < 7.25


@pytest.mark.parametrize("call, name", [
    (lambda: bandits.make_environment([0.3, 1.2]), "ctr"),
    (lambda: bandits.make_environment([0.3]), "ctr"),
    (lambda: bandits.make_environment([[0.3, 0.2]], segment_probs=[0.5, 0.5]), "segment_probs"),
    (lambda: bandits.make_environment([[0.3, 0.2], [0.1, 0.2]], segment_probs=[0.5, 0.6]),
     "segment_probs"),
    (lambda: bandits.make_environment([0.3, 0.2], num_arms=1), "num_arms"),
    (lambda: bandits.epsilon_greedy_params(ENV3, "greedy", 1.0), "strategy"),
    (lambda: bandits.epsilon_greedy_params(ENV3, "constant", -1.0), "gamma"),
    (lambda: bandits.epsilon_greedy_params(ENV3, "arm_specific", 1.0, arm_budgets=[1, -1, 1]),
     "arm_budgets"),
    (lambda: bandits.PolicyConfig(num_segments=0), "num_segments"),
    (lambda: bandits.PolicyConfig(max_arms=1), "max_arms"),
    (lambda: bandits.PolicyConfig(clock="local"), "clock"),
    (lambda: bandits.block_params(ENV3, "constant", 1.0, 0), "horizon"),
    (lambda: bandits.num_blocks(100, 1.5), "growth"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
