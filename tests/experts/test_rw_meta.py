"""RW-Meta: the decorrelation algebra, the law of y_t (moments), the static one-hot reduction to
RW-FTPL's per-round marginals, the structural privacy property (one release per round, nothing
else reads the data), Theorem 3 on average, and engine integration."""

from __future__ import annotations

import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import make_key, product_grid, record, rollout, simulate
from ldpjax.experts import EXPERTS_HINTS, privacy
from ldpjax.experts import learners as L
from ldpjax.experts import rw_meta as M
from ldpjax.experts.meta_bounds import regret_bound_meta

# The algebra below is checked through jitted wrappers of the public functions (one
# compilation per matrix size instead of one per eager op and size).
decorrelate = jax.jit(M.decorrelate)
perturbation_spectrum = jax.jit(M.perturbation_spectrum)
draw_perturbation = jax.jit(M.draw_perturbation)


def random_covariance(rng, m, n, rounds, eta):
    """Sigma = eta^2 sum_s X_s X_s^T for random one-hot / mixed learner actions."""
    sigma = np.zeros((m, m))
    for _ in range(rounds):
        x = np.eye(n)[rng.integers(0, n, size=m)]
        if rng.random() < 0.3:  # some distributions too
            x[0] = rng.dirichlet(np.ones(n))
        sigma += eta**2 * x @ x.T
    return sigma


def test_decorrelation_removes_the_ones_direction(x64):
    rng = np.random.default_rng(0)
    for m in (2, 5, 13):
        sigma = random_covariance(rng, m, 4, 30, 1.7)
        star = np.asarray(decorrelate(sigma))
        ones = np.ones(m)
        assert abs(ones @ star @ ones) <= 1e-10 * np.abs(sigma).sum()
        # Sigma* differs from Sigma by a multiple of 1 1^T only.
        diff = sigma - star
        np.testing.assert_allclose(diff, diff[0, 0] * np.ones((m, m)), rtol=1e-12)


def test_total_perturbation_is_isotropic_plus_ones_direction(x64):
    # Sigma_{t-1} + Cov(y_t) = c_t I + (1^T Sigma 1 / m^2) 1 1^T (the clip is inactive up to
    # rounding), for data-dependent covariances and both branches of c_t = max(2t, lambda_max).
    rng = np.random.default_rng(1)
    for m, rounds, eta, t in [(5, 40, 3.0, 41), (5, 40, 0.3, 41), (13, 10, 1.0, 3), (3, 1, 2.0, 2)]:
        sigma = random_covariance(rng, m, 6, rounds, eta)
        level, variances, vecs, lam_max = (np.asarray(a) for a in perturbation_spectrum(sigma, t))
        star = sigma - sigma.sum() / m**2
        assert lam_max == pytest.approx(np.linalg.eigvalsh(star)[-1], rel=1e-10)
        assert level == pytest.approx(max(2 * t, lam_max), rel=1e-12)
        assert np.all(variances >= 0)
        cov_y = vecs @ np.diag(variances) @ vecs.T
        total = sigma + cov_y
        expected = level * np.eye(m) + sigma.sum() / m**2 * np.ones((m, m))
        np.testing.assert_allclose(total, expected, atol=1e-9 * level)


def test_tiny_negative_variances_are_clipped():
    # When lambda_max(Sigma*) > 2t the top direction gets variance c - lambda_max = 0 exactly
    # (it could round to a tiny negative number without the clip; sqrt would then be NaN).
    rng = np.random.default_rng(2)
    sigma = random_covariance(rng, 6, 3, 60, 4.0).astype(np.float32)
    level, variances, _, lam_max = M.perturbation_spectrum(sigma, 2)  # eager, as users call it
    assert float(level) == float(lam_max) > 4
    assert np.all(np.asarray(variances) >= 0)
    y, _, _ = draw_perturbation(jax.random.key(0), sigma, 2)
    assert np.all(np.isfinite(np.asarray(y)))


def test_perturbation_covariance_moments(x64):
    # Empirical covariance of N = 100000 draws of y_t vs c_t I - Sigma*_{t-1}. Each entry of a
    # sample covariance has sd sqrt((S_ii S_jj + S_ij^2) / N); we allow 5 sd per entry (15
    # entries for m = 5: a false alarm needs a 5-sigma event, p < 1e-5).
    rng = np.random.default_rng(3)
    m, t = 5, 20
    sigma = random_covariance(rng, m, 3, t - 1, 1.5)
    target = max(2 * t, np.linalg.eigvalsh(sigma - sigma.sum() / m**2)[-1]) * np.eye(m) - (
        sigma - sigma.sum() / m**2
    )
    num = 100_000
    keys = jax.random.split(jax.random.key(7), num)
    draws = jax.jit(jax.vmap(lambda k: M.draw_perturbation(k, sigma, t)[0]))(keys)
    draws = np.asarray(draws)
    assert np.abs(draws.mean(0)).max() <= 5 * np.sqrt(np.diag(target).max() / num)
    emp = np.cov(draws.T, bias=True)
    sd = np.sqrt((np.outer(np.diag(target), np.diag(target)) + target**2) / num)
    assert np.all(np.abs(emp - target) <= 5 * sd + 1e-9), np.max(np.abs(emp - target) / sd)


# --------------------------------------------------------------------------- static one-hot
N_STATIC, T_STATIC = 4, 12
STATIC_GAINS = np.array(
    [[0.6, 0.5, 0.3, 0.1], [0.2, 0.7, 0.4, 0.0], [0.9, 0.1, 0.5, 0.3]] * 4, dtype=np.float32
)


def ftpl_marginals(gains, variances, rng, samples=200_000):
    """P(argmax(G_{t-1} + sqrt(v_t) Z) = i) by NumPy Monte Carlo (independent reference)."""
    T, n = gains.shape
    prefix = np.vstack([np.zeros(n), np.cumsum(gains, 0)[:-1]])
    out = np.zeros((T, n))
    for t in range(T):
        z = rng.standard_normal((samples, n)) * math.sqrt(variances[t])
        out[t] = np.bincount(np.argmax(prefix[t] + z, axis=1), minlength=n) / samples
    return out


@pytest.fixture(scope="module")
def static_meta_runs():
    ls = L.learner_set(L.static_family(N_STATIC))
    alg = M.rw_meta_algorithm(ls, N_STATIC)
    eta2_is_8 = 2.0 / math.sqrt(8.0)  # eta = sqrt(n) / mu = 2 / mu -> eta^2 = 8
    # mu = inf: clean scores, y_t ~ N(0, 2t I); mu = sqrt(2): eta^2 = 2 (finite mu).
    params = product_grid(M.meta_params(1.0, ls), mu=[np.inf, math.sqrt(2.0), eta2_is_8])
    res = simulate(
        alg,
        params,
        make_key(11),
        inputs=jnp.asarray(STATIC_GAINS),
        num_seeds=4000,
        hints=EXPERTS_HINTS,
        grid_ndim=1,
        record=record.every_step(lambda o: (o.chosen, o.level)),
    )
    chosen, level = res.record
    return np.asarray(chosen), np.asarray(level)  # (3, seeds, T), on the host


def test_static_one_hot_meta_matches_rw_ftpl_marginals_at_eta_squared_two(static_meta_runs):
    # eta^2 = 2 (mu = sqrt(n / 2)): c_t = 2t = eta^2 t, RW-FTPL's variance. mu = inf: clean
    # scores and y_t of variance c_t = 2t: the same per-round marginals.
    # Tolerance: empirical frequency of N = 4000 runs has sd <= sqrt(p(1-p)/N) <= 0.0079;
    # the reference (200k samples) adds sd <= sqrt(0.25 / 200000) = 0.0012; 5 sd -> 0.046
    # (48 cells per mu).
    chosen, level = static_meta_runs
    t = np.arange(1, T_STATIC + 1)
    ref = ftpl_marginals(STATIC_GAINS, 2.0 * t, np.random.default_rng(5))
    for g in (0, 1):
        np.testing.assert_allclose(level[g, 0], 2.0 * t, rtol=1e-5)
        freq = (
            np.stack([np.bincount(chosen[g, :, s], minlength=N_STATIC) for s in range(T_STATIC)])
            / chosen.shape[1]
        )
        sd = np.sqrt(ref * (1 - ref) / chosen.shape[1]) + 0.0012
        assert np.all(np.abs(freq - ref) <= 5 * sd + 1e-3), np.max(np.abs(freq - ref) / sd)


def test_static_one_hot_meta_variance_above_eta_squared_two(static_meta_runs):
    # eta^2 = 8: the perturbation is still isotropic, with variance c_t = max(2t, 8(t - 1))
    # (RW-FTPL without its initial draw z_0 once 8(t-1) >= 2t), not RW-FTPL's 8t.
    chosen, level = static_meta_runs
    t = np.arange(1, T_STATIC + 1)
    c = np.maximum(2.0 * t, 8.0 * (t - 1))
    np.testing.assert_allclose(level[2, 0], c, rtol=1e-5)
    ref = ftpl_marginals(STATIC_GAINS, c, np.random.default_rng(6))
    freq = (
        np.stack([np.bincount(chosen[2, :, s], minlength=N_STATIC) for s in range(T_STATIC)])
        / chosen.shape[1]
    )
    sd = np.sqrt(ref * (1 - ref) / chosen.shape[1]) + 0.0012
    assert np.all(np.abs(freq - ref) <= 5 * sd + 1e-3)
    assert np.all(c < 8.0 * t)  # strictly less than RW-FTPL's variance eta^2 t at every round


# --------------------------------------------------------------------------- privacy structure
SMALL = L.learner_set(
    L.ridge_family(windows=(4, 8), strengths=("weak", "strong")), L.leader_family()
)


def _small_setup(n=5):
    alg = M.rw_meta_algorithm(SMALL, n)  # cached factory: the same alg (and jitted init)
    params = M.meta_params(1.0, SMALL)
    state = jax.jit(alg.init)(params, jax.random.key(0))  # one compilation for the module
    return alg, params, state


def test_privatize_gains_is_called_once_per_round(monkeypatch):
    calls = []
    real = privacy.privatize_gains

    def spy(key, gains, mu, sensitivity=None, **kwargs):
        calls.append(gains.shape)
        return real(key, gains, mu, sensitivity, **kwargs)

    monkeypatch.setattr(privacy, "privatize_gains", spy)
    alg, params, state = _small_setup()
    jax.make_jaxpr(alg.step)(params, state, jnp.full((5,), 0.5), jax.random.key(1))
    assert calls == [(5,)]


def test_nothing_but_the_release_reads_the_gains(monkeypatch):
    # Replace the release by one that ignores the data: then the next state and the choice must
    # not depend on the gains at all (only the bookkeeping outputs may).
    def fixed_release(key, gains, mu, sensitivity=None, **kwargs):
        return jax.random.normal(key, gains.shape, gains.dtype)

    monkeypatch.setattr(privacy, "privatize_gains", fixed_release)
    alg, params, state = _small_setup()
    step = jax.jit(alg.step)
    rng = np.random.default_rng(0)
    s1 = s2 = state
    for t in range(12):
        key = jax.random.key(t)
        s1, o1 = step(params, s1, jnp.asarray(rng.uniform(size=5), jnp.float32), key)
        s2, o2 = step(params, s2, jnp.asarray(rng.uniform(size=5), jnp.float32), key)
        assert int(o1.chosen) == int(o2.chosen)
    for a, b in zip(jax.tree_util.tree_leaves(s1), jax.tree_util.tree_leaves(s2), strict=True):
        np.testing.assert_array_equal(a, b)


def test_step_is_decide_then_release_then_observe():
    assert list(inspect.signature(M.meta_decide).parameters) == ["state", "key"]
    assert "gain" not in " ".join(inspect.signature(M.meta_observe).parameters).replace(
        "noisy_gain", ""
    )
    alg, params, state = _small_setup()
    config = M.MetaConfig(5, SMALL.learners)
    g = jnp.asarray([0.1, 0.9, 0.4, 0.2, 0.7])
    key = jax.random.key(3)

    @jax.jit
    def both(state):
        new_state, out = alg.step(params, state, g, key)
        release_key, meta_key = jax.random.split(key)
        eta = M.release_scale(config, params.mu)
        noisy = privacy.privatize_gains(release_key, g, params.mu)
        manual = M.meta_observe(config, params, state, noisy, eta)
        return new_state, out, manual, M.meta_decide(state, meta_key)

    state, _, _, _ = both(state)  # a second round, so the learners have data
    new_state, out, manual, decision = both(state)
    for a, b in zip(
        jax.tree_util.tree_leaves(new_state), jax.tree_util.tree_leaves(manual), strict=True
    ):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert int(decision.chosen) == int(out.chosen)
    np.testing.assert_allclose(out.gain, decision.action @ g, rtol=1e-6)


# --------------------------------------------------------------------------- regret (Theorem 3)
def switching_gains(rng, T, n, period):
    means = np.full(n, 0.3)
    gains = np.empty((T, n), np.float32)
    for t in range(T):
        best = (t // period) % n
        m = means.copy()
        m[best] = 0.8
        gains[t] = np.clip(m + 0.1 * rng.standard_normal(n), 0, 1)
    return gains


MUS_REGRET = (np.inf, 2.0, 0.5)
REGRET_RECORD = record.combine(
    meta=record.total(lambda o: o.gain), learners=record.total(lambda o: o.learner_gains)
)


@pytest.fixture(scope="module")
def regret_runs():
    rng = np.random.default_rng(4)
    n, T = 4, 120
    gains = jnp.asarray(switching_gains(rng, T, n, 30))
    alg = M.rw_meta_algorithm(SMALL, n)
    params = product_grid(M.meta_params(1.0, SMALL), mu=list(MUS_REGRET))
    res = simulate(
        alg, params, make_key(5), inputs=gains, num_seeds=300, grid_ndim=1, record=REGRET_RECORD,
        hints=EXPERTS_HINTS,
    )
    # results on the host: the tests index them without eager (compiled) slicing
    return alg, params, gains, jax.tree_util.tree_map(np.asarray, res)


def test_regret_against_best_learner_within_theorem_3(regret_runs):
    # Mean over 300 runs of max_j G^(m)_{T,j} - meta gain must not exceed the mean of the
    # per-run bound (with the run's realised lambda term) by more than 3 standard errors.
    _, _, gains, res = regret_runs
    T, n = gains.shape
    bound_meta = jax.jit(regret_bound_meta)  # one compilation for the three mu
    regret = res.record["learners"].max(-1) - res.record["meta"]  # (mu, seeds)
    for g, mu in enumerate(MUS_REGRET):
        eta = float(privacy.noise_scale(mu, n))  # the bound's eta (sqrt 2 at mu = inf)
        ratio = np.asarray(jax.jit(M.lambda_max_ratio)(res.state.covariance[g], eta, T))
        assert np.all((ratio >= -1e-5) & (ratio <= SMALL.size + 1e-4))
        if mu == np.inf:  # clean scores: Sigma = 0, so the data-dependent term vanishes
            assert np.all(np.abs(ratio) <= 1e-6)
        bound = np.asarray(bound_meta(mu, T, SMALL.size, n, np.maximum(ratio, 0.0)))
        diff = regret[g] - bound
        assert diff.mean() <= 3 * diff.std() / math.sqrt(len(diff)), (
            mu,
            regret[g].mean(),
            bound.mean(),
        )
        assert res.state.t[g].max() == T


def test_engine_vmaps_over_mu_and_seeds_and_rollout_reproduces_a_seed(regret_runs):
    alg, params, gains, res = regret_runs
    assert res.record["meta"].shape == (len(MUS_REGRET), 300)
    one = jax.tree_util.tree_map(lambda x: x[1], params)
    run = jax.jit(
        lambda p: rollout(alg, p, make_key(5), inputs=gains, record=REGRET_RECORD, seed_index=2)[1]
    )
    np.testing.assert_allclose(run(one)["meta"], res.record["meta"][1, 2], rtol=1e-5)
    assert M.rw_meta_algorithm(SMALL, gains.shape[1]) is alg  # cached factory: compiled once


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="mu"):
        M.meta_params(0.0, SMALL)
    with pytest.raises(ValueError, match="num_experts"):
        M.MetaConfig(1, SMALL.learners)
    with pytest.raises(ValueError, match="learners"):
        M.MetaConfig(3, ())
    with pytest.raises(ValueError, match="sensitivity"):
        M.meta_params(1.0, SMALL, sensitivity=-1.0)
    with pytest.raises(TypeError):
        M.MetaConfig(3, SMALL.learners, sensitivity=1.0)  # a params leaf now, not config
    with pytest.raises(TypeError):
        M.rw_meta_algorithm(SMALL, 3, 1.0)  # granularity is keyword-only


def test_mu_inf_learners_and_scores_see_clean_gains():
    """mu = inf: eta = 0, the scores are X g (clean), Sigma stays 0, the learners step on the
    clean gains (noise_sd = 0), and the selection perturbation y_t is still drawn (c_t = 2t)."""
    n = 5
    config = M.MetaConfig(n, SMALL.learners)
    assert float(M.release_scale(config, jnp.inf)) == 0.0
    alg = M.rw_meta(config)
    params = M.meta_params(jnp.inf, SMALL)
    state = jax.jit(alg.init)(params, jax.random.key(0))
    g = jnp.asarray([0.1, 0.9, 0.4, 0.2, 0.7])
    # jit over the key only: params (mu = inf), state and g are closed-over constants, as
    # concrete as in an eager call; one compilation instead of eager op-by-op dispatch.
    step = jax.jit(lambda key: alg.step(params, state, g, key))
    new_state, out = step(jax.random.key(1))
    np.testing.assert_allclose(new_state.scores, state.actions @ g, rtol=1e-6)
    np.testing.assert_array_equal(new_state.covariance, np.zeros_like(new_state.covariance))
    clean = jax.jit(lambda: M.meta_observe(config, params, state, g, 0.0))()
    for a, b in zip(jax.tree_util.tree_leaves(new_state), jax.tree_util.tree_leaves(clean),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert float(out.level) == 2.0  # c_1 = max(2 * 1, 0): y_1 ~ N(0, 2 I), still random
    chosen = {
        int(step(jax.random.key(k))[1].chosen) for k in range(40)
    }
    assert len(chosen) > 1  # randomises among learners (all scores tie at t = 1)


def test_fail_closed_on_bad_gains_and_budgets():
    """Concrete: validate raises. Traced (jit): the release is NaN, so the scores become NaN."""
    alg, params, state = _small_setup()
    bad = jnp.full((4, 5), 5.0)
    with pytest.raises(ValueError, match="inputs"):
        alg.validate(params, bad)
    with pytest.raises(ValueError, match="inputs"):
        alg.validate(params, jnp.full((4, 3), 0.5))  # wrong number of experts
    for mu in (np.nan, -1.0, 0.0, -np.inf):
        with pytest.raises(ValueError, match="mu"):
            alg.validate(params._replace(mu=jnp.asarray(mu)), jnp.full((4, 5), 0.5))
    step = jax.jit(alg.step)
    new_state, _ = step(params, state, jnp.full((5,), 5.0), jax.random.key(0))
    assert np.all(np.isnan(new_state.scores))
    for mu in (np.nan, -1.0, 0.0, -np.inf):
        new_state, _ = step(params._replace(mu=jnp.asarray(mu, jnp.float32)), state,
                            jnp.full((5,), 0.5), jax.random.key(0))
        assert np.all(np.isnan(new_state.scores)), mu
