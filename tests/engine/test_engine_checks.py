"""simulate's argument checks: bad inputs fail at the boundary, naming the argument."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import Algorithm, make_key, product_grid, record, simulate
from ldpjax.engine.checks import check_int, leaf_name


class P(NamedTuple):
    mu: jax.Array
    scale: jax.Array


def _init(params, key):
    return jnp.zeros(())


def _step(params, state, inputs, key):
    push = 0.0 if inputs is None else jnp.sum(inputs)
    state = state + params.scale * jax.random.normal(key) / params.mu + push
    return state, {"x": state}


def _validate(params, inputs):
    mu = np.asarray(params.mu, dtype=np.float64)
    if np.any(~(mu > 0)):
        raise ValueError(f"params.mu must be > 0 (nan not allowed), got {mu[~(mu > 0)][:3]}")
    if inputs is not None and np.any(np.abs(np.asarray(inputs)) > 1):
        raise ValueError("inputs must lie in [-1, 1]")


ALG = Algorithm(_init, _step, validate=_validate)
OK = P(jnp.float32(1.0), jnp.float32(1.0))
KEY = make_key(0)

BAD = [
    # (kwargs overriding a good call, exception, message fragment)
    (dict(num_steps=0), ValueError, "num_steps"),
    (dict(num_steps=-3), ValueError, "num_steps"),
    (dict(num_steps=2.5), ValueError, "num_steps"),
    (dict(num_steps="10"), TypeError, "num_steps"),
    (dict(num_steps=True), ValueError, "num_steps"),
    (dict(num_steps=2**31), ValueError, "num_steps"),
    (dict(num_seeds=0), ValueError, "num_seeds"),
    (dict(num_seeds=1.5), ValueError, "num_seeds"),
    (dict(num_seeds="4"), TypeError, "num_seeds"),
    (dict(num_seeds=None), TypeError, "num_seeds"),
    (dict(seed_offset=-1), ValueError, "seed_offset"),
    (dict(seed_offset=2**32), ValueError, "seed_offset"),
    (dict(seed_offset=2**32 - 1, num_seeds=2), ValueError, "wrap around"),
    (dict(seed_offset="0"), TypeError, "seed_offset"),
    (dict(seed_chunk=0), ValueError, "seed_chunk"),
    (dict(time_chunk=0), ValueError, "time_chunk"),
    (dict(time_chunk=1.5), ValueError, "time_chunk"),
    (dict(memory_limit=0), ValueError, "memory_limit"),
    (dict(grid_ndim=-1), ValueError, "grid_ndim"),
    (dict(grid_ndim=1), ValueError, "grid_ndim=1 but params.mu"),
    (dict(grid_ndim="1"), TypeError, "grid_ndim"),
    (dict(params=P("a", 1.0)), TypeError, "params.mu"),
    (dict(params=P(np.array(["x", "y"]), 1.0)), TypeError, "params.mu"),
    (dict(params=P(1.0, np.array([1 + 2j]))), TypeError, "params.scale"),
    (dict(params=P(1.0, np.zeros((0,)))), ValueError, "params.scale is empty"),
    (dict(params=P(np.array([1.0, object()], dtype=object), 1.0)), TypeError, "params.mu"),
    (dict(params=P(0.0, 1.0)), ValueError, "params.mu"),
    (dict(params=P(jnp.nan, 1.0)), ValueError, "params.mu"),
    (dict(inputs=jnp.zeros((0, 2)), num_steps=None), ValueError, "inputs is empty"),
    (dict(inputs=jnp.zeros((3, 2)), num_steps=5), ValueError, "fewer than num_steps"),
    (dict(inputs={"a": jnp.zeros((5,)), "b": jnp.zeros((4,))}), ValueError, "same leading time"),
    (dict(inputs=jnp.float32(1.0)), ValueError, "time axis"),
    (dict(inputs=np.array(["a", "b", "c", "d", "e"])), TypeError, "inputs"),
    (dict(inputs=2 * jnp.ones((5, 2))), ValueError, "inputs must lie"),
    (dict(num_steps=None), ValueError, "num_steps is required"),
    (dict(key=jax.random.split(KEY, 2)), ValueError, "single PRNG key"),
    (dict(key="key"), TypeError, "key"),
    (dict(key=jnp.zeros(2, jnp.float32)), ValueError, "key"),
    (dict(record=lambda o: o), TypeError, "record"),
    (dict(rng="mersenne"), ValueError, "rng"),
    (dict(devices=[]), ValueError, "devices"),
    (dict(algorithm=(_init, _step)), TypeError, "algorithm"),
    # horizons and records that cannot fit are refused with advice
    (dict(num_steps=10**9, num_seeds=10**6), ValueError, "run-steps"),
    (dict(num_steps=10**7, record=record.every_step("x"), memory_limit=2**20), ValueError,
     "record.every_step"),
]


@pytest.mark.parametrize(("override", "error", "match"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_arguments_name_the_argument(override, error, match):
    kw = dict(algorithm=ALG, params=OK, key=KEY, num_steps=5, num_seeds=2)
    kw.update(override)
    args = (kw.pop("algorithm"), kw.pop("params"), kw.pop("key"), kw.pop("num_steps"))
    with pytest.raises(error, match=match):
        simulate(*args, **kw)


def test_result_too_large_for_the_host_is_refused(monkeypatch):
    import ldpjax.engine.plan as plan

    monkeypatch.setattr(plan, "host_memory_bytes", lambda: 2**20)
    with pytest.raises(ValueError, match="on the host"):
        simulate(ALG, OK, KEY, 100, num_seeds=4096, record=record.every_step("x"))


def test_validate_hook_names_the_grid_index():
    grid = product_grid(P(1.0, 1.0), mu=[0.5, 2.0, -1.0, 3.0], scale=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"params\.mu.*grid point \(2, 0\) of grid shape \(4, 2\)"):
        simulate(ALG, grid, KEY, 3, grid_ndim=2)
    nan_grid = product_grid(P(1.0, 1.0), mu=[1.0, jnp.nan])
    with pytest.raises(ValueError, match=r"grid point \(1,\)"):
        simulate(ALG, nan_grid, KEY, 3, grid_ndim=1)
    # valid grids run; validate is skipped for algorithms without the hook
    ok = simulate(ALG, product_grid(P(1.0, 1.0), mu=[0.5, 2.0]), KEY, 3, grid_ndim=1)
    assert ok.record["x"].shape == (2, 1)
    simulate(Algorithm(_init, _step), P(0.0, 1.0), KEY, 3)  # no hook: runs (inf noise)


def test_validate_failing_only_on_the_whole_grid_says_so():
    def pairwise(params, inputs):
        if np.ndim(params.mu) and np.unique(np.asarray(params.mu)).size != np.size(params.mu):
            raise ValueError("params.mu values must be distinct")

    alg = Algorithm(_init, _step, validate=pairwise)
    with pytest.raises(ValueError, match="whole params grid"):
        simulate(alg, P(jnp.array([1.0, 1.0]), jnp.array([1.0, 1.0])), KEY, 3, grid_ndim=1)


def test_seed_offset_upper_end_is_usable_and_distinct():
    last = simulate(ALG, OK, KEY, 4, num_seeds=1, seed_offset=2**32 - 1)
    first = simulate(ALG, OK, KEY, 4, num_seeds=1, seed_offset=0)
    assert not np.array_equal(last.record["x"], first.record["x"])
    # indices above 2**31 are unsigned: 2**31 differs from 0 and from 2**31 - 1
    a = simulate(ALG, OK, KEY, 4, num_seeds=2, seed_offset=2**31 - 1).record["x"]
    assert a[0] != a[1] and a[1] != first.record["x"][0]


def test_helpers():
    assert check_int("n", np.int64(3), 1) == 3
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 2\]"):
        check_int("n", 3, 1, 2)
    path = jax.tree_util.tree_leaves_with_path({"a": P(1.0, 2.0)})[1][0]
    assert leaf_name("params", path) == "params['a'].scale"
