"""The fast RW-FTPL step computes what its from-scratch definition computes, bit for bit.

Two rewrites of the step are held to their definitions here:

* :func:`~ldpjax.experts.rw_ftpl.leader` (max, then the lowest index attaining it) against
  ``jnp.argmax`` -- ties, NaN (argmax's first NaN), +-inf, signed zeros, batched rows;
* :func:`~ldpjax.experts.rw_ftpl.perturbed_release` (one release whose noise is the walk at
  mu = inf) against the definition ``privatize_gains(key, g, mu, sensitivity) +
  walk_scale(mu) * N(0, I)`` (the same key, so the same z), at finite mu and at mu = inf,
  concrete and traced inside the engine's permit; and twenty steps of ``rw_ftpl`` (on the
  engine's key schedule) against a step built from those definitions.

And the privacy layer still fails closed: a NaN, <= 0 or -inf mu, an unpermitted traced inf,
a bad sensitivity or a gain outside [0, 1] give a NaN release under ``jit``; concrete bad
values raise ``ValueError`` naming the argument. Exact comparisons, fixed keys: nothing here
is statistical.
"""

from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.experts import privacy
from ldpjax.experts.privacy import privatize_gains
from ldpjax.mechanisms import no_privacy_permitted


# Keys: philox4x32 (the engine's default generator, make_key's) -- its programs compile ~30%
# faster on CPU than those of JAX's default threefry2x32 (measured for the AdaBatch step).
def _key(seed):
    return jax.random.key(seed, impl="philox4x32")


F = importlib.import_module("ldpjax.experts.rw_ftpl")  # the module (the package re-exports the factory)
N = 5
KEY = _key(3)
GAINS = jnp.array([0.0, 0.25, 1.0, 0.5, 0.75])


def _definition(key, gains, mu, sensitivity=None):
    """RW-FTPL's release from its definition: the mechanism, plus the walk drawn again."""
    sens = privacy.resolve_sensitivity(sensitivity, N, gains.dtype)
    noisy = privatize_gains(key, gains, mu, sens)
    return noisy + privacy.walk_scale(mu, gains.dtype) * jax.random.normal(
        key, gains.shape, gains.dtype
    )


# --------------------------------------------------------------------------- leader
def _rows():
    rng = np.random.default_rng(0)
    ties = rng.integers(0, 3, size=(64, 7)).astype(np.float32)  # many ties
    wide = rng.normal(size=(32, 200)).astype(np.float32)
    special = np.array([
        [np.nan, 1.0, np.nan],
        [1.0, np.nan, 2.0],
        [np.nan, np.nan, np.nan],
        [-np.inf, -np.inf, -np.inf],
        [np.inf, 1.0, np.inf],
        [-0.0, 0.0, -0.0],
        [0.0, -0.0, 0.0],
        [-1.0, -np.inf, -1.0],
    ], np.float32)
    return ties, wide, special


@pytest.mark.parametrize("which", [0, 1, 2])
def test_leader_is_argmax(which):
    rows = _rows()[which]
    x = jnp.asarray(rows)
    expected = np.asarray(jnp.argmax(x, axis=-1))
    got = F.leader(x)  # eager
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(F.leader))(x)), expected)
    one = jax.jit(F.leader)  # one row at a time, the step's shape (NumPy rows: no eager slicing)
    for row, e in zip(rows[:8], expected[:8], strict=True):
        assert int(one(row)) == int(e)


# --------------------------------------------------------------------------- the release
@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0, float("inf")])
@pytest.mark.parametrize("sensitivity", [None, 1.3])
def test_release_equals_definition_concrete(mu, sensitivity):
    params = F.ftpl_params(mu, sensitivity)
    got = F.perturbed_release(privatize_gains, KEY, GAINS, params, N, None)
    want = _definition(KEY, GAINS, params.mu, params.sensitivity)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if mu == float("inf"):  # the walk is there (and nothing else): sqrt 2 z
        z = jax.random.normal(KEY, GAINS.shape, GAINS.dtype)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(GAINS + privacy.NONPRIVATE_ETA * z))


def test_release_equals_definition_traced_in_permit():
    """Under vmap + jit with the engine's permit (how simulate runs a grid with mu = inf)."""
    mus = jnp.array([0.5, 2.0, jnp.inf], jnp.float32)
    keys = jax.random.split(KEY, 4)

    def new(key, mu):
        return F.perturbed_release(privatize_gains, key, GAINS, F.FTPLParams(mu), N, None)

    def old(key, mu):
        return _definition(key, GAINS, mu)

    grid = jax.vmap(jax.vmap(lambda f, k, m: f(k, m), (None, None, 0)), (None, 0, None))
    with no_privacy_permitted():  # both in one compiled program
        got, want = jax.jit(lambda k, m: (grid(new, k, m), grid(old, k, m)))(keys, mus)
    assert bool(jnp.all(jnp.isfinite(got)))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# --------------------------------------------------------------------------- fail closed
# One jitted release for every fail-closed test below (traced params and gains): compiled
# once outside and once inside the permit, instead of a new trace per call.
_RELEASE = jax.jit(lambda p, g: F.perturbed_release(privatize_gains, KEY, g, p, N, None))


def _traced(mu, sensitivity=1.0, gains=GAINS):
    params = F.FTPLParams(jnp.float32(mu), jnp.float32(sensitivity))
    return _RELEASE(params, gains)


@pytest.mark.parametrize("mu", [float("nan"), -1.0, 0.0, -0.0, float("-inf")])
def test_bad_mu_gives_nan_release_under_jit(mu):
    assert bool(jnp.all(jnp.isnan(_traced(mu))))
    with no_privacy_permitted():
        assert bool(jnp.all(jnp.isnan(_traced(mu))))


def test_traced_inf_needs_the_permit():
    assert bool(jnp.all(jnp.isnan(_traced(float("inf")))))  # e.g. an overflow under jit
    with no_privacy_permitted():
        assert bool(jnp.all(jnp.isfinite(_traced(float("inf")))))


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, float("inf"), float("nan")])
@pytest.mark.parametrize("mu", [1.0, float("inf")])
def test_bad_sensitivity_gives_nan_release(sensitivity, mu):
    with no_privacy_permitted():
        assert bool(jnp.all(jnp.isnan(_traced(mu, sensitivity))))


@pytest.mark.parametrize("mu", [1.0, float("inf")])
def test_gain_outside_domain_gives_nan_release(mu):
    with no_privacy_permitted():
        out = _traced(mu, gains=GAINS.at[2].set(1.5))
    assert bool(jnp.all(jnp.isnan(out)))


@pytest.mark.parametrize("mu", [-1.0, 0.0, float("nan"), float("-inf")])
def test_bad_concrete_mu_raises(mu):
    with pytest.raises(ValueError, match="mu"):
        F.ftpl_params(mu)
    with pytest.raises(ValueError, match="mu"):
        F.perturbed_release(privatize_gains, KEY, GAINS, F.FTPLParams(mu), N, None)


def test_walk_as_release_passes_unpermitted_inf_on():
    traced = jax.jit(lambda m: F.walk_as_release(m, jnp.float32(2.0))[0])(jnp.float32(jnp.inf))
    assert float(traced) == float("inf")  # the mechanism turns that into a NaN release
    with no_privacy_permitted():
        mu, sens = jax.jit(lambda m: F.walk_as_release(m, jnp.float32(2.0)))(jnp.float32(jnp.inf))
    assert float(mu) == 1.0 and float(sens) == np.float32(np.sqrt(2.0))


# --------------------------------------------------------------------------- a whole sweep
def _definition_step(params, state, gains, key):
    """RW-FTPL's step written from the definitions: argmax, release + walk (drawn twice)."""
    action = jnp.argmax(state.noisy_total).astype(jnp.int32)
    gains = jnp.asarray(gains, state.noisy_total.dtype)
    noisy = _definition(key, gains, params.mu)
    return F.FTPLState(state.noisy_total + noisy), F.FTPLOutputs(action, gains[action])


def _scan(step, params, gains, key):
    """One run as the engine's key schedule has it: z_0 from one key, step t from fold_in(t)."""
    init_key, run_key = jax.random.split(key)
    state = F.FTPLState(_definition(init_key, jnp.zeros(N), params.mu))

    def body(state, xs):
        t, g = xs
        return step(params, state, g, jax.random.fold_in(run_key, t))

    return jax.lax.scan(body, state, (jnp.arange(gains.shape[0]), gains))


def test_steps_equal_definition_bit_for_bit():
    """Twenty rounds, three mu (one of them inf, in the engine's permit) and three seeds."""
    gains = jax.random.bernoulli(_key(1), 0.5, (20, N)).astype(jnp.float32)
    mus = jnp.array([0.5, 2.0, jnp.inf], jnp.float32)
    keys = jax.random.split(_key(7), 3)
    fast_step = F.rw_ftpl(F.FTPLConfig(N)).step

    def sweep(step, mus, keys):
        one = lambda mu, key: _scan(step, F.FTPLParams(mu), gains, key)  # noqa: E731
        return jax.vmap(jax.vmap(one, (None, 0)), (0, None))(mus, keys)

    both = jax.jit(lambda m, k: (sweep(fast_step, m, k), sweep(_definition_step, m, k)))
    with no_privacy_permitted():  # both sweeps in one compiled program
        (fast_state, fast), (slow_state, slow) = both(mus, keys)
    np.testing.assert_array_equal(np.asarray(fast.action), np.asarray(slow.action))
    np.testing.assert_array_equal(np.asarray(fast.gain), np.asarray(slow.gain))
    np.testing.assert_array_equal(np.asarray(fast_state.noisy_total),
                                  np.asarray(slow_state.noisy_total))
    assert bool(jnp.all(jnp.isfinite(fast_state.noisy_total)))
    assert len(np.unique(np.asarray(fast.action))) > 1  # the leader moves: the check can fail

