"""RW-FTPL and RW-AdaBatch: privacy structure, noise moments, equivalences, a NumPy reference,
regret within the bounds, and vmap/compile-once behaviour through the engine."""

from __future__ import annotations

import importlib
import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import product_grid, record, rollout, seed_keys, simulate
from ldpjax.experts import (
    EXPERTS_HINTS,
    AdaBatchConfig,
    FTPLConfig,
    adabatch_params,
    bernoulli_gains,
    ftpl_params,
    privatize_gains,
    regret_bound_adabatch,
    regret_bound_ftpl,
    rw_adabatch,
    rw_ftpl,
    simulate_on_gains,
    static_regret,
    switching_gains,
)
from ldpjax.mechanisms import no_privacy_permitted


# Keys: philox4x32 (the engine's default generator, make_key's) -- its programs compile ~30%
# faster on CPU than those of JAX's default threefry2x32 (measured for the AdaBatch step).
def _key(seed):
    return jax.random.key(seed, impl="philox4x32")


# The modules (the package re-exports functions of the same names).
ftpl_module = importlib.import_module("ldpjax.experts.rw_ftpl")
adabatch_module = importlib.import_module("ldpjax.experts.rw_adabatch")

# Shared shapes, recorder and budgets so compiled kernels are reused across tests (conftest
# drops them after the module). Every engine run of the float32 tests is one grid of MUS-like
# budgets (3 points, the last one inf, so every trace sits in the engine's no-noise permit) x
# SEEDS seeds x HORIZON rounds with the EVERY recorder: the engine's kernels of FTPL and
# ADABATCH are compiled once and shared by the regret, equivalence, batch-output, true-gains
# and compile-once tests (mu and alpha are leaves: new values do not recompile). Algorithms
# needed by one test only (the fixed-release stand-ins, the fast path, max_batch = 1) run
# through ``_rollouts`` -- one jit(vmap(rollout)) per algorithm, the engine's key schedule,
# cheaper to compile than the engine's three kernels.
N, HORIZON = 5, 400
EVERY = record.every_step(lambda out: out)
TOTAL = record.total(lambda out: out.gain)
FTPL = rw_ftpl(FTPLConfig(N))
ADABATCH = rw_adabatch(AdaBatchConfig(N))
FAST = rw_adabatch(AdaBatchConfig(N, fast=True))
MUS, SEEDS = [0.5, 2.0, jnp.inf], 50


def _engine(algo, params, key, gains, mus=MUS):
    """simulate over the shared (3 budgets x SEEDS seeds) shape, recording every round."""
    return simulate(algo, product_grid(params, mu=mus), key, num_seeds=SEEDS, inputs=gains,
                    grid_ndim=1, record=EVERY, hints=EXPERTS_HINTS)


_ROLLOUTS = {}


def _rollouts(algo, params, key, gains, mus=MUS):
    """(final state, every-round record) over (mus, SEEDS seeds), as the engine's run
    (grid point, seed s) computes it (rollout with seed_index = s); one compiled program per
    algorithm and parameter structure, traced in the permit as the engine does for a grid
    holding inf."""
    sig = (algo, type(params))
    if sig not in _ROLLOUTS:
        def one(p, k, g, s):
            return rollout(algo, p, k, inputs=g, record=EVERY, seed_index=s)

        seeds = jax.vmap(one, (None, None, None, 0))
        _ROLLOUTS[sig] = jax.jit(jax.vmap(seeds, (0, None, None, None)))
    grid = product_grid(params, mu=jnp.asarray(mus, jnp.result_type(float)))
    with no_privacy_permitted():
        state, rec = _ROLLOUTS[sig](grid, key, gains, jnp.arange(SEEDS))
    return jax.tree_util.tree_map(np.asarray, state), jax.tree_util.tree_map(np.asarray, rec)


# --------------------------------------------------------------------------- noise moments
@pytest.mark.parametrize("which", ["ftpl", "adabatch"])
def test_noisy_gains_have_mean_g_and_covariance_eta2_identity(which):
    """The increment of the noisy state over one round is g~ = g + z, z ~ N(0, eta^2 I).

    n = 4, mu = 2 -> eta = sqrt(4) / 2 = 1. N = 20000 draws: the mean of a coordinate has sd
    eta / sqrt(N) = 0.0071 (5 sd = 0.036); a covariance entry has sd <= eta^2 sqrt(2 / N) =
    0.01 (5 sd = 0.05).
    """
    n, draws = 4, 20000
    gains = jnp.array([0.1, 0.5, 0.9, 1.0])
    if which == "ftpl":
        algo, params = rw_ftpl(FTPLConfig(n)), ftpl_params(2.0)
    else:  # the sampling path: one release per round, buffered until the batch closes
        algo, params = rw_adabatch(AdaBatchConfig(n, fast=False)), adabatch_params(2.0, 0.01)
    keys = jax.random.split(_key(3), draws)

    def increment(key):
        init_key, step_key = jax.random.split(key)
        state = algo.init(params, init_key)
        zero = state._replace(noisy_total=jnp.zeros(n))
        new_state, _ = algo.step(params, zero, gains, step_key)
        total = new_state.noisy_total
        if which == "adabatch":  # a batch longer than 1 keeps the release in the buffer
            total = total + new_state.buffer
        return total, state.noisy_total

    noisy, initial = jax.jit(jax.vmap(increment))(keys)
    noisy, initial = np.asarray(noisy, np.float64), np.asarray(initial, np.float64)
    np.testing.assert_allclose(noisy.mean(0), np.asarray(gains), atol=0.036)
    np.testing.assert_allclose(np.cov(noisy.T), np.eye(n), atol=0.05)
    # z_0 (the init draw, g_0 = 0) has the same law around 0.
    np.testing.assert_allclose(initial.mean(0), np.zeros(n), atol=0.036)
    np.testing.assert_allclose(np.cov(initial.T), np.eye(n), atol=0.05)


def test_mu_inf_uses_eta_sqrt2():
    algo = rw_ftpl(FTPLConfig(3))
    keys = jax.random.split(_key(0), 20000)
    # jit: one compiled program (eagerly every op compiles); the params are built outside, so
    # mu = inf stays a concrete constant of the trace, honoured as "no privacy noise" (the walk).
    params = ftpl_params(jnp.inf)
    z0 = jax.jit(jax.vmap(lambda k: algo.init(params, k).noisy_total))(keys)
    # sd of a sample variance with N = 60000 normal draws: 2 sqrt(2/N) = 0.012; 5 sd = 0.06.
    assert float(jnp.var(z0)) == pytest.approx(2.0, abs=0.06)


# --------------------------------------------------------------------------- structure
def test_decisions_and_updates_take_only_noisy_data():
    assert list(inspect.signature(ftpl_module.leader).parameters) == ["noisy_total"]
    assert list(inspect.signature(ftpl_module.accumulate).parameters) == ["state", "noisy_gains"]
    assert list(inspect.signature(adabatch_module.plan_batch).parameters) == [
        "noisy_total",
        "round_index",
        "eta",
        "alpha",
        "max_batch",
    ]
    assert list(inspect.signature(adabatch_module.absorb).parameters) == ["state", "noisy_gains"]
    # The states hold noisy sums and counters only.
    assert ftpl_module.FTPLState._fields == ("noisy_total",)
    assert "gain" not in " ".join(adabatch_module.AdaBatchState._fields)


def _fixed_release(key, gains, mu, sensitivity, *, granularity=None):
    """A stand-in release whose output does not depend on the true gains at all."""
    eta = sensitivity / mu
    return 0.5 + eta * jax.random.normal(key, jnp.shape(gains), jnp.result_type(eta))


@pytest.mark.parametrize("which", ["ftpl", "adabatch", "adabatch_fast"])
def test_true_gains_reach_actions_only_through_the_release(which):
    """Hold the noisy releases fixed and change the true gains: the actions do not move.

    With the real release the same change does move the actions (so the check can fail).
    """
    a = bernoulli_gains(_key(1), HORIZON, N, 0.3)
    b = 1.0 - a  # every gain changed
    if which == "ftpl":
        real, params = FTPL, ftpl_params(1.0)
        fixed = rw_ftpl(FTPLConfig(N), release=_fixed_release)
    else:  # the sampling path (one release per round) and the fast path (one per batch)
        fast = which == "adabatch_fast"
        real, params = (FAST if fast else ADABATCH), adabatch_params(1.0, 0.5)
        fixed = rw_adabatch(AdaBatchConfig(N, fast=fast), release=_fixed_release)
    key = _key(9)

    def run(algo, gains):  # the engine's shared kernels for FTPL / ADABATCH, else _rollouts
        if algo in (FTPL, ADABATCH):
            return _engine(algo, params, key, gains).record
        return _rollouts(algo, params, key, gains)[1]

    out_a, out_b = run(fixed, a), run(fixed, b)
    np.testing.assert_array_equal(out_a.action, out_b.action)
    if which != "ftpl":
        np.testing.assert_array_equal(out_a.batch_size, out_b.batch_size)
        assert out_a.batch_size.max() > 1  # batching happened
    assert not np.array_equal(out_a.gain, out_b.gain)  # the earned gains do differ
    real_a, real_b = run(real, a), run(real, b)
    assert not np.array_equal(real_a.action, real_b.action)


# --------------------------------------------------------------------------- equivalences
@pytest.mark.parametrize("fast", [False, True])
def test_adabatch_with_unit_batches_reproduces_ftpl_exactly(fast):
    """max_batch = 1: the same keys give the same releases, so the same actions.

    Sampling path (both through the engine's kernels): bit-identical noisy totals. Fast path
    (one release per batch of 1, through B * release(mean, Delta / sqrt B) with B = 1; run
    through ``_rollouts`` with the engine's key schedule): the same numbers up to how XLA
    contracts g + s z into a fused multiply-add in the two compiled graphs (1 ulp per round,
    so the totals agree to rtol 1e-5 after 400 rounds); actions and gains are still identical.
    """
    gains = bernoulli_gains(_key(2), HORIZON, N, 0.1)
    key = _key(5)
    ftpl = _engine(FTPL, ftpl_params(1.0), key, gains)  # the engine's run (grid point, seed)
    unit_algo = rw_adabatch(AdaBatchConfig(N, max_batch=1, fast=fast))
    if fast:  # the same keys through rollout (the tolerance covers the other compiled graph)
        unit_state, unit = _rollouts(unit_algo, adabatch_params(1.0), key, gains)
    else:  # bit for bit: through the engine's kernels, like FTPL's run
        res = _engine(unit_algo, adabatch_params(1.0), key, gains)
        unit_state, unit = res.state, res.record
    np.testing.assert_array_equal(ftpl.record.action, unit.action)
    np.testing.assert_array_equal(ftpl.record.gain, unit.gain)
    assert np.all(unit.batch_size == 1) and np.all(unit.batch_start)
    if fast:
        np.testing.assert_allclose(ftpl.state.noisy_total, unit_state.noisy_total, rtol=1e-5)
    else:
        np.testing.assert_array_equal(ftpl.state.noisy_total, unit_state.noisy_total)


def _normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _reference_delay(gap, t, eta, n, alpha):
    """Largest B with p(k,B) <= alpha sqrt(log n/(t+B)) by integer bisection (plain math)."""

    def ok(b):
        beta = gap / (eta * math.sqrt(2 * b)) - math.sqrt(math.log(2 * n - 2))
        pdf = math.exp(-0.5 * beta * beta) / math.sqrt(2 * math.pi)
        p = 2 * _normal_cdf(-math.sqrt(2) * beta) + 2 * math.sqrt(math.pi) * pdf * (
            _normal_cdf(beta) - _normal_cdf(-beta)
        )
        return p <= alpha * math.sqrt(math.log(n) / (t + b))

    lo, hi = 1, 2**30 + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _reference_adabatch(initial_noise, noisy_gains, eta, alpha):
    """Plain NumPy RW-AdaBatch on given noisy releases (one run)."""
    horizon, n = noisy_gains.shape
    total = initial_noise.copy()
    buffer = np.zeros(n)
    actions, sizes = [], []
    t = 1
    while t <= horizon:
        top = np.sort(total)
        size = _reference_delay(top[-1] - top[-2], t, eta, n, alpha)
        action = int(np.argmax(total))
        for s in range(t, min(t + size, horizon + 1)):
            buffer = buffer + noisy_gains[s - 1]
            actions.append(action)
            sizes.append(size)
        if t + size - 1 <= horizon:
            total = total + buffer
            buffer = np.zeros(n)
        t += size
    return np.asarray(actions), np.asarray(sizes)


def test_adabatch_matches_a_numpy_reference(x64):
    """Same releases (drawn from the engine's keys) -> same actions and batch sizes.

    Three runs of the engine's key schedule (rollout with seed_index = s reproduces seed s of
    a simulate sweep) and the reference's releases drawn from the same keys: one compiled
    program (x64 compiles everything anew).
    """
    n, horizon, mu, alpha = 4, 600, 1.0, 0.3
    gains = bernoulli_gains(_key(4), horizon, n, 0.2)
    key = _key(11)
    algo = rw_adabatch(AdaBatchConfig(n, fast=False))  # the sampling path: one release per round
    params = adabatch_params(mu, alpha)

    @jax.jit
    def runs(key, gains):
        def one(seed):
            _, out = rollout(algo, params, key, inputs=gains, record=EVERY, seed_index=seed)
            init_key, run_key = seed_keys(key, seed)
            initial = privatize_gains(init_key, jnp.zeros(n), mu)
            noisy = jax.vmap(
                lambda t, g: privatize_gains(jax.random.fold_in(run_key, t), g, mu)
            )(jnp.arange(horizon), gains)
            return out, initial, noisy

        return jax.vmap(one)(jnp.arange(3))

    out, initials, noisies = jax.tree_util.tree_map(np.asarray, runs(key, gains))
    assert initials.dtype == np.float64
    eta = math.sqrt(n) / mu
    for seed in range(3):
        actions, sizes = _reference_adabatch(initials[seed], noisies[seed], eta, alpha)
        np.testing.assert_array_equal(out.action[seed], actions)
        np.testing.assert_array_equal(out.batch_size[seed], sizes)
        assert sizes.max() > 5


def test_batch_size_output_describes_the_batches():
    """Each batch: batch_start at its first round, constant action and batch_size, and
    exactly batch_size rounds (except a final batch cut by the horizon)."""
    gains = bernoulli_gains(_key(6), HORIZON, N, 0.3)
    # the shared kernels (3 budgets x SEEDS seeds), at budgets mu in {4, 8, inf}
    out = _engine(ADABATCH, adabatch_params(4.0, 0.5), _key(1), gains,
                  mus=[4.0, 8.0, jnp.inf]).record
    out = jax.tree_util.tree_map(lambda x: np.asarray(x).reshape(-1, HORIZON), out)
    for seed in range(len(MUS) * SEEDS):  # every run of the grid
        starts = np.flatnonzero(out.batch_start[seed])
        assert starts[0] == 0
        ends = np.append(starts[1:], HORIZON)
        for first, stop in zip(starts, ends, strict=True):
            size = out.batch_size[seed, first]
            assert np.all(out.batch_size[seed, first:stop] == size)
            assert np.all(out.action[seed, first:stop] == out.action[seed, first])
            assert stop - first == size or stop == HORIZON
        assert out.batch_size[seed].max() > 10


# --------------------------------------------------------------------------- regret
def _mean_regret_and_se(result, gains):
    earned = np.asarray(result.record.gain, np.float64).sum(-1)  # (grid, seeds)
    regret = np.asarray(static_regret(gains, earned[..., None]))[..., 0]
    return regret.mean(-1), regret.std(-1, ddof=1) / math.sqrt(regret.shape[-1])


@pytest.mark.parametrize("seeds", [SEEDS, pytest.param(150, marks=pytest.mark.slow)])
@pytest.mark.parametrize("environment", ["static", "switching"])
def test_regret_within_bounds_on_average(environment, seeds):
    """Mean regret over seeds <= bound + 3 standard errors (CLT), mu in {0.5, 2, inf}.

    The tolerance is the observed standard error, so it is valid at any number of seeds; the
    fast suite runs 50 (se ~ sd / 7; the module's shared shape, so the engine's kernels of
    the other tests are reused), the slow one 150 (se ~ sd / 12).
    """
    alpha = 0.01
    if environment == "static":
        gains = bernoulli_gains(_key(21), HORIZON, N, 0.2)
    else:
        gains = switching_gains(_key(22), HORIZON, N, 0.5, 0.02)
    mus = [0.5, 2.0, jnp.inf]
    key = _key(8)
    ftpl = simulate_on_gains(
        FTPL,
        product_grid(ftpl_params(1.0), mu=mus),
        key,
        gains,
        num_seeds=seeds,
        grid_ndim=1,
        record=EVERY,
    )
    ada = simulate_on_gains(
        ADABATCH,
        product_grid(adabatch_params(1.0, alpha), mu=mus),
        key,
        gains,
        num_seeds=seeds,
        grid_ndim=1,
        record=EVERY,
    )
    for result, bound_fn in (
        (ftpl, lambda m: regret_bound_ftpl(m, HORIZON, N)),
        (ada, lambda m: regret_bound_adabatch(m, HORIZON, N, alpha)),
    ):
        mean, se = _mean_regret_and_se(result, gains)
        for i, mu in enumerate(mus):
            assert mean[i] <= float(bound_fn(mu)) + 3 * se[i], (environment, mu, mean[i])
    # The algorithms learn: at mu = inf the regret is well below that of uniform play.
    uniform = float(static_regret(gains, jnp.sum(jnp.mean(gains, axis=1))))
    for result in (ftpl, ada):
        assert _mean_regret_and_se(result, gains)[0][2] < 0.5 * uniform


# --------------------------------------------------------------------------- engine behaviour
def test_sweeps_over_mu_compile_once():
    """A new grid of budgets (same shapes) reuses the engine's compiled kernels.

    The module's shared ADABATCH shape (3 budgets, the last inf, x SEEDS seeds x HORIZON
    rounds): the kernels may already be cached by earlier tests; the second grid and a 2-d
    grid of the same size must not add a kernel nor a trace.
    """
    engine = importlib.import_module("ldpjax.engine.simulate")
    gains = bernoulli_gains(_key(0), HORIZON, N, 0.2)
    algo = ADABATCH
    first = _engine(algo, adabatch_params(1.0), _key(0), gains, mus=[0.5, 1.0, jnp.inf])
    misses = engine._kernels.cache_info().misses
    _, advance, _ = engine._kernels(algo, EVERY, HORIZON, HORIZON, None, True, None,
                                    EXPERTS_HINTS)
    traces = advance._cache_size()  # >= 1 (other seed counts, e.g. the slow regret run, add)
    second = _engine(algo, adabatch_params(1.0), _key(0), gains, mus=[0.25, 4.0, jnp.inf])
    assert engine._kernels.cache_info().misses == misses
    assert advance._cache_size() == traces  # traced and compiled once for both grids
    assert first.record.gain.shape == second.record.gain.shape == (3, SEEDS, HORIZON)
    assert not np.array_equal(first.record.action, second.record.action)
    # mu and alpha are leaves: a 2-d grid (1 x 3: alpha varies) runs too, on the same kernels.
    both = simulate(
        algo,
        product_grid(adabatch_params(1.0), mu=[jnp.inf], alpha=[0.01, 0.5, 2.0]),
        _key(0),
        num_seeds=SEEDS,
        inputs=gains,
        grid_ndim=2,
        record=EVERY,
        hints=EXPERTS_HINTS,
    )
    assert both.record.gain.shape == (1, 3, SEEDS, HORIZON)
    assert engine._kernels.cache_info().misses == misses and advance._cache_size() == traces
    mean_size = both.record.batch_size.mean(axis=(0, 2, 3))
    assert mean_size[0] < mean_size[1] < mean_size[2]  # a larger alpha, longer batches
    # The factories are cached: every call style returns the same object.
    assert rw_adabatch(AdaBatchConfig(N)) is algo
    assert rw_adabatch(AdaBatchConfig(N), release=privatize_gains) is algo
    assert rw_ftpl(FTPLConfig(N), privatize_gains) is FTPL


def test_gradient_of_total_noisy_sum_reaches_mu():
    """mu is a differentiable leaf: d/dmu of the final noisy total (through the scan)."""
    n = 3
    gains = jnp.full((20, n), 0.5)
    algo = rw_ftpl(FTPLConfig(n))

    def final_total(mu):
        state, _ = rollout(
            algo,
            ftpl_params(1.0)._replace(mu=mu),
            _key(0),
            inputs=gains,
            record=record.last(lambda o: o.gain),
        )
        return jnp.sum(state.noisy_total)

    h = 1e-3

    @jax.jit  # the gradient and both finite-difference evaluations: one compilation
    def grad_and_fd(mu):
        return jax.grad(final_total)(mu), (final_total(mu + h) - final_total(mu - h)) / (2 * h)

    grad, fd = grad_and_fd(jnp.float32(1.5))
    assert float(grad) == pytest.approx(float(fd), rel=1e-2)


# --------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: ftpl_params(0.0), "mu"),
        (lambda: ftpl_params(-2.0), "mu"),
        (lambda: adabatch_params(-1.0), "mu"),
        (lambda: adabatch_params(1.0, 0.0), "alpha"),
        (lambda: adabatch_params(1.0, -0.5), "alpha"),
        (lambda: FTPLConfig(1), "num_experts"),
        (lambda: AdaBatchConfig(1), "num_experts"),
        (lambda: AdaBatchConfig(3, max_batch=0), "max_batch"),
        (lambda: ftpl_params(1.0, sensitivity=0.0), "sensitivity"),
        (lambda: adabatch_params(1.0, 0.01, sensitivity=-1.0), "sensitivity"),
        (lambda: FTPLConfig(3, granularity=0.3), "granularity"),
    ],
)
def test_bad_parameters_raise(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


@pytest.mark.parametrize(
    "gains, fragment",
    [
        (np.full((5, 3), 1.5), "in \\[0, 1\\]"),
        (np.full((5, 3), -0.1), "in \\[0, 1\\]"),
        (np.array([[0.5, np.nan, 0.1]]), "in \\[0, 1\\]"),
        (np.full((5,), 0.5), "2-d"),
        (np.full((5, 1), 0.5), "n >= 2"),
        (np.array([["a", "b"]]), "numeric"),
    ],
)
def test_malformed_gains_raise(gains, fragment):
    with pytest.raises(ValueError, match=f"gains.*{fragment}"):
        simulate_on_gains(rw_ftpl(FTPLConfig(3)), ftpl_params(1.0), _key(0), gains)


# --------------------------------------------------------------------------- privacy layer
ALGOS = {
    "ftpl": (FTPL, ftpl_params),
    "adabatch_fast": (FAST, lambda mu: adabatch_params(mu, 0.5)),
    "adabatch_sampling": (ADABATCH, lambda mu: adabatch_params(mu, 0.5)),
}


_FINAL_TOTAL = {}


def _final_total(which):
    """jit(params, gains) -> final noisy total, one per algorithm: the two fail-closed tests
    below call it with the same shapes (20 rounds, float32 mu), so they share one compilation."""
    if which not in _FINAL_TOTAL:
        algo = ALGOS[which][0]
        _FINAL_TOTAL[which] = jax.jit(
            lambda p, g: rollout(algo, p, _key(0), inputs=g, record=TOTAL)[0].noisy_total
        )
    return _FINAL_TOTAL[which]


@pytest.mark.parametrize("which", list(ALGOS))
def test_gains_outside_the_domain_fail_closed(which):
    """Concrete: validate (and so simulate) raises naming the inputs. Traced (jit): NaN state."""
    algo, make = ALGOS[which]
    gains = bernoulli_gains(_key(1), 20, N, 0.3)
    with pytest.raises(ValueError, match="inputs"):
        algo.validate(make(1.0), 10 * gains)
    with pytest.raises(ValueError, match="inputs"):
        simulate(algo, make(1.0), _key(0), inputs=10 * gains, record=TOTAL)
    params = make(1.0)._replace(mu=jnp.float32(1.0))  # traced under jit
    run = _final_total(which)
    assert np.all(np.isfinite(run(params, gains)))
    bad = run(params, gains.at[3, 1].set(1.5))  # one bad entry in round 4
    assert np.all(np.isnan(bad))


@pytest.mark.parametrize("which", list(ALGOS))
def test_invalid_traced_mu_gives_nan_and_only_checked_inf_gives_the_walk(which):
    algo, make = ALGOS[which]
    gains = bernoulli_gains(_key(1), 20, N, 0.3)

    def final(mu):  # mu traced: the same compiled function as the test above
        return _final_total(which)(make(1.0)._replace(mu=jnp.asarray(mu, jnp.float32)), gains)

    for mu in (np.nan, -1.0, 0.0, -np.inf):
        assert np.all(np.isnan(final(jnp.float32(mu)))), mu
        with pytest.raises(ValueError, match="mu"):
            algo.validate(make(1.0)._replace(mu=jnp.asarray(mu)), gains)
    # a traced inf that nothing checked (an overflow under the user's jit) fails closed ...
    assert np.all(np.isnan(final(jnp.exp(jnp.float32(100.0)))))
    # ... while a checked one (the engine's permit, or a concrete inf) means no privacy noise,
    # but RW-FTPL's sqrt(2) walk
    with no_privacy_permitted():
        clean = final(jnp.float32(np.inf))
    concrete_params = make(1.0)._replace(mu=jnp.float32(np.inf))  # a constant of the trace
    concrete = jax.jit(  # one compiled program (an eager rollout compiles every op)
        lambda g: rollout(algo, concrete_params, _key(0), inputs=g, record=TOTAL)[0]
    )(gains).noisy_total
    np.testing.assert_allclose(np.asarray(concrete), np.asarray(clean), rtol=1e-6)
    assert np.all(np.isfinite(clean))
    assert not np.allclose(clean, np.asarray(gains).sum(0), atol=1e-3)


def test_privacy_events_per_record():
    """One round's gain vector is released once: GaussianEvent(mu); granular: the mechanism's
    DiscreteGaussianEvent; AdaBatch's amplified central claim never exceeds the local one."""
    from ldpjax.accounting import DiscreteGaussianEvent, GaussianEvent, delta, epsilon
    from ldpjax.experts import amplified_event

    for algo, make in ALGOS.values():
        event = algo.privacy_event(make(0.7))
        assert isinstance(event, GaussianEvent) and float(event.mu) == pytest.approx(0.7)
    granular = rw_ftpl(FTPLConfig(N, granularity=2**-8)).privacy_event(ftpl_params(1.0))
    assert isinstance(granular, DiscreteGaussianEvent) and granular.dim == N
    # the granular claim is close to (and, rounding included, no better than) mu-GDP
    assert float(epsilon(granular, 1e-5)) >= float(epsilon(GaussianEvent(1.0), 1e-5)) - 1e-3
    amplified = amplified_event(1.0, jnp.asarray([1.0, 50.0, 400.0]), N, 0.5)
    d = np.asarray(delta(amplified, 1.0))
    assert np.all(d <= float(delta(GaussianEvent(1.0), 1.0)) + 1e-6)
    assert d[-1] < d[0]  # later rounds sit in longer batches: more amplification


def test_granular_release_is_on_the_grid():
    """granularity = 2^-8: every release (and so the noisy total at finite mu) is a multiple of
    2^-8 -- nothing in the low-order bits (Mironov's attack finds nothing)."""
    g = 2.0**-8
    algo = rw_ftpl(FTPLConfig(N, granularity=g))
    gains = bernoulli_gains(_key(1), 20, N, 0.3) * 0.37  # off-grid values
    # Under jit: one compiled program (an eager rollout of the granular path costs ~2x).
    state = jax.jit(
        lambda x: rollout(algo, ftpl_params(1.0), _key(0), inputs=x, record=TOTAL)[0]
    )(gains)
    scaled = np.asarray(state.noisy_total, np.float64) / g
    np.testing.assert_array_equal(scaled, np.round(scaled))
    # the float path: the fail-closed tests' compiled program (20 rounds, float32 mu)
    float_total = _final_total("ftpl")(ftpl_params(1.0)._replace(mu=jnp.float32(1.0)), gains)
    scaled = np.asarray(float_total, np.float64) / g
    assert not np.array_equal(scaled, np.round(scaled))  # the float path is not on the grid
