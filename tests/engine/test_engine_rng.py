"""The key schedule (against a reference written with raw jax.random), generators, chunk plan."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import (
    Algorithm,
    in_process,
    make_key,
    plan_chunks,
    product_grid,
    record,
    rollout,
    simulate,
)
from ldpjax.engine.keys import INVARIANT_DEFAULT, KEY_IMPLS, key_impl_name
from ldpjax_experiments.checkpointing import checkpointed


def _init(scale, key):
    return jax.random.uniform(key)


def _step(scale, state, inputs, key):
    draw = jax.random.normal(key)
    return state + scale * draw, {"draw": draw, "state": state + scale * draw}


ALG = Algorithm(_init, _step)


@pytest.mark.parametrize("crn", [True, False])
def test_key_schedule_matches_an_independent_reference(crn):
    """Reference written out with jax.random.fold_in / split, not with the engine's helpers:
    run (g, s): init_key, run_key = split(fold_in(base, seed_offset + s)), base = key or
    fold_in(key, g); step t draws from fold_in(run_key, t)."""
    key = jax.random.key(11)
    scales = jnp.array([1.0, 3.0])
    res = simulate(ALG, scales, key, 6, num_seeds=3, grid_ndim=1, seed_offset=5,
                   record=record.every_step("draw"), common_random_numbers=crn, seed_chunk=2,
                   time_chunk=4)
    for g in range(2):
        base = key if crn else jax.random.fold_in(key, g)
        for s in range(3):
            pair = jax.random.split(jax.random.fold_in(base, 5 + s))
            init_key, run_key = pair[0], pair[1]
            draws = [jax.random.normal(jax.random.fold_in(run_key, t)) for t in range(6)]
            np.testing.assert_array_equal(res.record[g, s], np.asarray(draws))  # default float dtype
            state = jax.random.uniform(init_key)
            for d in draws:
                state = state + scales[g] * d
            np.testing.assert_allclose(res.state[g, s], state, rtol=1e-6)


@pytest.mark.parametrize("rng", ["fast", "philox2x32", "invariant", "threefry2x32"])
def test_generators_bit_identical_across_chunks_and_match_rollout(rng):
    grid = product_grid({"scale": jnp.float32(1.0)}, scale=[0.5, 2.0])["scale"]
    kw = dict(num_seeds=7, grid_ndim=1, record=record.every_step("draw"), rng=rng)
    base = simulate(ALG, grid, make_key(3), 12, **kw)
    expected = {"invariant": INVARIANT_DEFAULT, "threefry2x32": "threefry2x32"}.get(rng, "philox2x32")
    assert base.info.rng == expected
    for seed_chunk, time_chunk in [(1, None), (3, 5), (7, 1)]:
        other = simulate(ALG, grid, make_key(3), 12, seed_chunk=seed_chunk, time_chunk=time_chunk, **kw)
        np.testing.assert_array_equal(base.record, other.record)
    _, one = rollout(ALG, grid[1], make_key(3), 12, record=record.every_step("draw"),
                     seed_index=4, rng=rng)
    np.testing.assert_array_equal(one["draw"] if isinstance(one, dict) else one, base.record[1, 4])
    default = simulate(ALG, grid, make_key(3), 12, **{**kw, "rng": None})
    # make_key's default generator is the invariant default: rng=None and "invariant" agree
    assert default.info.rng == INVARIANT_DEFAULT
    assert (expected == INVARIANT_DEFAULT) == np.array_equal(default.record, base.record)


def test_default_generator_is_philox4x32_with_64_bit_keys():
    """Where JAX offers it, the default generator is philox4x32: 64-bit keys (2 words), ~4x
    threefry2x32's rate here (module docstring of ldpjax.engine.keys); else threefry2x32."""
    expected = "philox4x32" if "philox4x32" in KEY_IMPLS else "threefry2x32"
    assert INVARIANT_DEFAULT == expected
    assert key_impl_name(make_key(0)) == expected
    assert jax.random.key_data(make_key(0)).shape == (2,)  # 2 x 32 bits for both


@pytest.mark.slow
def test_philox_keys_are_32_bits_and_collide_at_scale():
    """Why philox is not the default: 2**20 step keys of 1000 runs hold duplicates (expected
    n**2 / 2**33 = 128 pairs; threefry's 64-bit keys: 6e-8)."""
    def step_keys(impl):
        key = jax.random.key(0, impl=impl)
        fn = jax.vmap(lambda s: jax.vmap(lambda t: jax.random.key_data(
            jax.random.fold_in(jax.random.split(jax.random.fold_in(key, s))[1], t)))(jnp.arange(1024)))
        return np.asarray(jax.jit(fn)(jnp.arange(1024))).reshape(2**20, -1)

    philox = step_keys("philox2x32")
    assert philox.shape[1] == 1
    duplicates = philox.shape[0] - np.unique(philox[:, 0]).size
    # Poisson(128): 5 sd = 57
    assert 128 - 57 < duplicates < 128 + 57, duplicates
    for impl in ("threefry2x32", INVARIANT_DEFAULT):  # 64-bit keys: no duplicate expected
        keys = step_keys(impl)
        assert np.unique(keys, axis=0).shape[0] == 2**20


def test_chunk_plan_unit():
    plan = plan_chunks(num_points=3, num_seeds=10, num_steps=100, num_devices=4, run_bytes=100,
                       record_bytes=8, seed_chunk=4, time_chunk=30, memory_limit=10**9)
    assert plan.seed_chunks() == [(0, 4), (4, 8), (8, 10)]
    assert plan.time_chunks() == [(0, 30), (30, 30), (60, 30), (90, 10)]
    assert plan.batch == 12  # 3 points x 4 seeds, already a multiple of 4 devices
    p, s = plan.run_indices(8, 10, seed_offset=100)
    # 3 points x 2 seeds = 6 runs, padded to 12 by repeating the last run
    assert p.tolist() == [0, 0, 1, 1, 2, 2] + [2] * 6
    assert s.tolist() == [108, 109] * 3 + [109] * 6 and s.dtype == np.uint32
    auto = plan_chunks(num_points=2, num_seeds=1000, num_steps=10, num_devices=3, run_bytes=1000,
                       record_bytes=8, memory_limit=2 * 50 * (4 * 1000 + 1024))
    assert auto.seed_chunk == 50 and auto.batch == 102
    with pytest.raises(ValueError, match="memory_limit"):
        plan_chunks(num_points=2, num_seeds=1, num_steps=10, num_devices=1, run_bytes=10**6,
                    record_bytes=8, memory_limit=10**6)


# --------------------------------------------------------------------------- secure keys
def test_convert_key_never_narrows_a_secure_key():
    from ldpjax.engine.keys import convert_key
    from ldpjax.mechanisms import secure_key

    key = secure_key()
    assert convert_key(key, "ldpjax_secure128") is key
    for impl in KEY_IMPLS:  # every generator the engine offers holds fewer than 128 bits
        with pytest.raises(ValueError, match="secure key .* is never converted"):
            convert_key(key, impl)
    with pytest.raises(ValueError, match="cannot become one"):  # nor does a seed become secure
        convert_key(make_key(0), "ldpjax_secure128")
    # ordinary keys convert as before (the first random words of the key)
    data = jax.random.bits(make_key(0), (1,), jnp.uint32)
    np.testing.assert_array_equal(jax.random.key_data(convert_key(make_key(0), "philox2x32")),
                                  data)


@pytest.mark.parametrize("rng", ["fast", "invariant", "philox2x32", "threefry2x32"])
def test_simulate_and_rollout_refuse_to_convert_a_secure_key(rng):
    from ldpjax.mechanisms import secure_key

    key = secure_key()
    with pytest.raises(ValueError, match="rng must be None with a secure key"):
        simulate(ALG, jnp.float32(1.0), key, 4, rng=rng)
    with pytest.raises(ValueError, match="rng must be None with a secure key"):
        rollout(ALG, jnp.float32(1.0), key, 4, rng=rng)


def test_simulate_runs_a_secure_key_once_and_never_converts_it(tmp_path):
    from ldpjax.mechanisms import secure_key

    key = secure_key()
    grid = jnp.array([0.5, 2.0])
    with pytest.raises(ValueError, match=r"num_seeds=2 .*release_run .*SelfComposedEvent"):
        simulate(ALG, jnp.float32(1.0), key, 4, num_seeds=2)
    with pytest.raises(ValueError, match=r"2 grid point\(s\)"):
        simulate(ALG, grid, key, 4, grid_ndim=1)
    # a release key never reaches a runner: not the checkpointing one (it would write a
    # digest of the key to disk), not even the engine's own default passed by name
    for runner in (checkpointed(tmp_path), in_process):
        with pytest.raises(ValueError, match="runner must be None with a secure key"):
            simulate(ALG, jnp.float32(1.0), key, 4, runner=runner)
    assert not any(tmp_path.iterdir())
    one = simulate(ALG, jnp.float32(1.0), key, 6, record=record.every_step("draw"))
    assert one.info.rng == "ldpjax_secure128" and one.record.shape == (1, 6)
    # the engine's key schedule, written out with jax.random on the secure key itself
    init_key, run_key = jax.random.split(jax.random.fold_in(key, 0))
    draws = [jax.random.normal(jax.random.fold_in(run_key, t)) for t in range(6)]
    np.testing.assert_array_equal(one.record[0], np.asarray(draws))
    _, again = rollout(ALG, jnp.float32(1.0), key, 6, record=record.every_step("draw"))
    np.testing.assert_array_equal(one.record[0], again)
    # seeded keys keep the simulation semantics: several seeds and points, any generator
    seeded = simulate(ALG, grid, make_key(0), 4, num_seeds=3, grid_ndim=1, rng="fast")
    assert seeded.record["draw"].shape == (2, 3)
