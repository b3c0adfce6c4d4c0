"""Learners for RW-Meta: the ridge predictor against closed-form least squares (NumPy), the
recursive (circular-buffer) learner against the direct formula, the RW-FTPL and static
learners, family vmapping, and input validation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.experts import learners as L

# Jitted wrappers of the public functions (traced whole: one compilation per shape and
# precision instead of one per eager op); a few calls below stay eager on purpose.
ridge_predictions = jax.jit(L.ridge_predictions)
ridge_weights = jax.jit(L.ridge_weights, static_argnums=3)


def ridge_reference(history: np.ndarray, window: int, prior_sd: float, noise_sd: float):
    """Independent NumPy ridge fit: lstsq on the augmented system [Phi; sqrt(kappa) I]."""
    k = min(len(history), window)
    if k == 0:
        return np.zeros(history.shape[1])
    recent = history[::-1][:k]  # lag 1 first
    lags = np.arange(1, k + 1)
    phi = np.stack([np.ones(k), -lags / window], axis=1)
    kappa = (noise_sd**2 + 0.25) / prior_sd**2
    design = np.vstack([phi, np.sqrt(kappa) * np.eye(2)])
    target = np.vstack([recent, np.zeros((2, history.shape[1]))])
    beta, *_ = np.linalg.lstsq(design, target, rcond=None)
    return beta[0]  # phi(0) = (1, 0)


@pytest.mark.parametrize(
    "count,window,prior_sd,noise_sd",
    [(1, 8, 1.0, 0.0), (5, 8, 0.1, 1.4), (8, 8, 1.0, 3.0), (30, 16, 0.01, 2.0), (70, 64, 0.1, 5.0)],
)
def test_ridge_prediction_equals_closed_form_least_squares(x64, count, window, prior_sd, noise_sd):
    rng = np.random.default_rng(count)
    history = rng.normal(0.3, 1.0, size=(count, 5))
    hyper = L.RidgeHyper(jnp.asarray(window), jnp.asarray(prior_sd))
    # eager for the first case, jitted (the same function traced whole) for the others
    predict = L.ridge_predictions if count == 1 else ridge_predictions
    ours = np.asarray(predict(hyper, history, noise_sd))
    np.testing.assert_allclose(
        ours, ridge_reference(history, window, prior_sd, noise_sd), rtol=1e-9, atol=1e-12
    )


def test_ridge_without_penalty_is_ordinary_least_squares_extrapolation(x64):
    # Tiny penalty: the fit of an exact line through the window is reproduced exactly, so the
    # prediction is the line's next value (a hand-checkable case: y_l = 2 - 0.1 l -> 2.0).
    window = 6
    lags = np.arange(window, 0, -1)  # oldest first
    history = np.stack([2.0 - 0.1 * lags, 0.5 + 0 * lags], axis=1)
    weights = ridge_weights(window, window, 1e-12, window)
    prediction = np.asarray(weights) @ history[::-1]
    np.testing.assert_allclose(prediction, [2.0, 0.5], rtol=1e-9)


def test_ridge_weights_zero_before_data_and_beyond_window():
    w = np.asarray(ridge_weights(8, 0, 1.0, 16))
    assert np.all(w == 0)
    w = np.asarray(ridge_weights(8, 12, 1.0, 16))
    assert np.all(w[8:] == 0) and np.all(w[:8] != 0)
    w = np.asarray(ridge_weights(8, 3, 1.0, 16))  # fewer observations than the window
    assert np.all(w[3:] == 0) and np.all(w[:3] != 0)


def test_strong_prior_ranks_by_window_mean_and_penalty_scales_with_noise(x64):
    # kappa = (eta^2 + 1/4) / tau^2 grows with the release noise; with a strong prior the trend
    # is shrunk away and the weights become (almost) equal: the prediction ranks experts by
    # the window mean.
    k_weak = float(L.ridge_penalty(1.0, 0.0))
    k_noisy = float(L.ridge_penalty(1.0, 3.0))
    assert k_weak == pytest.approx(0.25) and k_noisy == pytest.approx(9.25)
    w = np.asarray(ridge_weights(16, 40, float(L.ridge_penalty(0.01, 5.0)), 16))
    assert np.ptp(w) / np.mean(w) < 1e-3
    w_weak = np.asarray(ridge_weights(16, 40, float(L.ridge_penalty(1.0, 0.0)), 16))
    assert w_weak[0] > 2 * np.mean(w_weak)  # weak prior: extrapolates the trend (recent > old)


def test_recursive_learner_matches_direct_predictions():
    # The shared circular buffer (length 64) wraps around twice: after each step every
    # learner's action is the argmax of its direct ridge prediction from the whole history.
    fam = L.ridge_family(windows=(8, 32, 64), strengths=("weak", "medium", "strong"))
    rng = np.random.default_rng(0)
    n, T = 6, 150
    noisy = rng.normal(0.2, 1.5, size=(T, n)).astype(np.float32)
    state, actions = L.family_init(fam.learner, fam.hyper, n, 1.5)
    np.testing.assert_allclose(actions, np.full((9, n), 1 / n))  # uniform before any data
    step = jax.jit(lambda s, g: L.family_step(fam.learner, fam.hyper, s, g, 1.5))
    windows, taus = np.asarray(fam.hyper.window), np.asarray(fam.hyper.prior_sd)
    for t in range(T):
        state, actions = step(state, noisy[t])
        if t in (0, 7, 63, 64, 100, 149):
            actions = np.asarray(actions)  # index on the host (no eager slicing kernels)
            for i in range(9):
                window, tau = int(windows[i]), float(taus[i])
                with jax.enable_x64(True):
                    ref = ridge_reference(noisy[: t + 1].astype(np.float64), window, tau, 1.5)
                assert int(np.argmax(actions[i])) == int(np.argmax(ref)), (window, tau, t)
                assert np.asarray(actions[i]).max() == 1.0


def test_argmax_action_is_uniform_over_ties():
    argmax_action = jax.jit(L.argmax_action)
    np.testing.assert_allclose(argmax_action(jnp.array([1.0, 3.0, 3.0, 0.0])), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(argmax_action(jnp.array([1.0, 3.0, 2.0])), [0, 1, 0])


def test_leader_learner_is_argmax_of_cumulative_noisy_gains():
    learner = L.follow_the_noisy_leader()
    rng = np.random.default_rng(1)
    noisy = rng.normal(size=(20, 4)).astype(np.float32)
    hyper = L.LeaderHyper(jnp.asarray(1.0))
    state, action = jax.jit(learner.init, static_argnums=1)(hyper, 4, jnp.float32(1.0))
    np.testing.assert_allclose(action, [1, 0, 0, 0])  # RW-FTPL's leader(): ties -> lowest index
    step = jax.jit(learner.step)
    for t in range(20):
        state, action = step(hyper, state, noisy[t], jnp.float32(1.0))
        assert int(np.argmax(action)) == int(np.argmax(noisy[: t + 1].sum(0)))


def test_static_family_is_identity_and_ignores_data():
    fam = L.static_family(5)
    states, actions = L.family_init(fam.learner, fam.hyper, 5, 1.0)
    np.testing.assert_array_equal(actions, np.eye(5))
    _, actions = L.family_step(fam.learner, fam.hyper, states, jnp.arange(5.0) * 7, 1.0)
    np.testing.assert_array_equal(actions, np.eye(5))


def test_family_equals_its_learners_run_one_by_one():
    # A family of 4 (shared buffer, vmapped weights) acts exactly like 4 one-learner families,
    # and a vmapped (non-batched) family like its learners run one by one.
    fam = L.ridge_family(windows=(8, 16), strengths=("weak", "strong"))
    assert fam.labels == (
        "ridge w=8 weak",
        "ridge w=8 strong",
        "ridge w=16 weak",
        "ridge w=16 strong",
    )
    rng = np.random.default_rng(2)
    noisy = rng.normal(0.5, 1.0, size=(30, 7)).astype(np.float32)
    one = [jax.tree_util.tree_map(lambda x, i=i: x[i : i + 1], fam.hyper) for i in range(4)]
    family_step = jax.jit(lambda h, s, g: L.family_step(fam.learner, h, s, g, 1.0))
    family_init = jax.jit(lambda h: L.family_init(fam.learner, h, 7, 1.0)[0])
    states = family_init(fam.hyper)
    singles = [family_init(h) for h in one]
    leader = L.follow_the_noisy_leader()
    leader_family_step = jax.jit(lambda h, s, g: L.family_step(leader, h, s, g, 1.0))
    leader_step = jax.jit(leader.step)
    lhyper = L.LeaderHyper(jnp.asarray([1.0, 2.0]))
    lstates, _ = jax.jit(lambda h: L.family_init(leader, h, 7, 1.0))(lhyper)
    leader_init = jax.jit(lambda h: leader.init(h, 7, jnp.float32(1.0))[0])
    lhypers = [L.LeaderHyper(jnp.asarray(c)) for c in (1.0, 2.0)]
    lsingle = [leader_init(h) for h in lhypers]
    for t in range(30):
        states, actions = family_step(fam.hyper, states, noisy[t])
        actions = np.asarray(actions)
        for i in range(4):
            singles[i], a = family_step(one[i], singles[i], noisy[t])
            np.testing.assert_array_equal(actions[i], np.asarray(a)[0])
        lstates, lactions = leader_family_step(lhyper, lstates, noisy[t])
        lactions = np.asarray(lactions)
        for i in range(2):
            lsingle[i], a = leader_step(lhypers[i], lsingle[i], noisy[t], jnp.float32(1.0))
            np.testing.assert_array_equal(lactions[i], a)


def test_paper_learners_are_thirteen():
    ls = L.paper_learners()
    assert ls.size == 13
    assert ls.labels[-1] == "rw-ftpl"
    assert len({lab for lab in ls.labels}) == 13


def test_evaluate_learners_on_clean_gains():
    # Static learners earn exactly their expert's column; the leader learner on clean gains is
    # follow-the-leader (uniform in round 1).
    gains = np.array([[0.2, 0.9], [0.3, 0.1], [0.9, 0.0], [1.0, 0.0]])
    ls = L.learner_set(L.static_family(2), L.leader_family())
    earned = np.asarray(L.evaluate_learners(ls, gains))
    np.testing.assert_allclose(earned[:, 0], gains[:, 0], rtol=1e-6)
    np.testing.assert_allclose(earned[:, 1], gains[:, 1], rtol=1e-6)
    # FTL: round 1 tie -> expert 0 (0.2), then leader after (0.2, 0.9) is expert 1 -> 0.1,
    # after (0.5, 1.0) still 1 -> 0.0, after (1.4, 1.0) expert 0 -> 1.0.
    np.testing.assert_allclose(earned[:, 2], [0.2, 0.1, 0.0, 1.0], rtol=1e-6)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="gains"):
        L.evaluate_learners(L.paper_learners(), np.full((5, 3), 1.5))
    with pytest.raises(ValueError, match="strengths"):
        L.ridge_family(strengths=("huge",))
    with pytest.raises(ValueError, match="max_window"):
        L.ridge_family(windows=(8, 128), max_window=64)
    with pytest.raises(ValueError, match="num_experts"):
        L.static_family(1)
    with pytest.raises(ValueError, match="noise_sd"):
        L.evaluate_learners(L.paper_learners(), np.zeros((5, 3)), noise_sd=-1.0)
