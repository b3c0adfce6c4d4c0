"""Compile once: value-comparable recorders, the kernel cache, compile/run seconds."""

from __future__ import annotations

import importlib
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import (
    ELEMENTAL_EMITTERS,
    Algorithm,
    ExecutionHints,
    make_key,
    product_grid,
    record,
    simulate,
)
from ldpjax.engine.compile import CompileTimer, enable_compile_cache, kernel_compiler_options

rollout_mod = importlib.import_module("ldpjax.engine.rollout")


class P(NamedTuple):
    mu: jax.Array


def _init(params, key):
    return jnp.zeros(())


def _body(params, state, inputs, key):
    state = state + 1.0 + jax.random.normal(key) / params.mu
    return state, {"total": state, "noise": state - 1.0}


def test_recorders_compare_by_value():
    assert record.total("total") == record.total("total")
    assert hash(record.total("total")) == hash(record.total(record.field("total")))
    assert record.total("total") != record.total("noise")
    assert record.total("total") != record.last("total")

    def built(i):  # a fresh lambda at every call, capturing i
        return record.combine(a=record.total(lambda o: o["total"] * i), b=record.last("noise"))

    assert built(2) == built(2) and hash(built(2)) == hash(built(2))
    assert built(2) != built(3)
    assert built(2).spec != built(3).spec  # checkpoints of the two never mix
    # a select reading a global is keyed by that global's identity
    def cast():
        return record.at_steps([1, 2], lambda o: o["total"].astype(jnp.int32))

    assert cast() == cast()
    with pytest.raises(TypeError, match="select"):
        record.total(3)
    with pytest.raises(ValueError, match="field name"):
        record.field("")


def test_field_selects_attributes_items_and_casts():
    out = {"a": P(jnp.float32(2.5))}
    assert record.field("a.mu")(out) == 2.5
    assert record.field("a.mu", dtype="int32")(out).dtype == jnp.int32
    both = record.fields("a", renamed="a.mu")(out)
    assert set(both) == {"a", "renamed"}


def _fresh_recorder():
    # a new lambda object at every call (as in a loop or a function called per sweep)
    return record.total(lambda o: o["total"])


def test_compile_once_pinned_with_assert_max_traces():
    # 1) how many times the engine traces a fresh algorithm's step for one configuration
    probe_traces = []

    def probe_step(params, state, inputs, key):
        probe_traces.append(1)
        return _body(params, state, inputs, key)

    kw = dict(num_seeds=3, grid_ndim=1)
    simulate(Algorithm(_init, probe_step), product_grid(P(1.0), mu=np.linspace(0.1, 5, 50)),
             make_key(0), 10, record=_fresh_recorder(), **kw)
    n = len(probe_traces)
    assert n >= 1

    # 2) the same code path under chex.assert_max_traces(n): a second sweep over other budgets
    # with a recorder written anew (fresh lambda) must not trace again
    def step(params, state, inputs, key):
        return _body(params, state, inputs, key)

    guarded = Algorithm(_init, chex.assert_max_traces(step, n=n))
    first = simulate(guarded, product_grid(P(1.0), mu=np.linspace(0.1, 5, 50)), make_key(0), 10,
                     record=_fresh_recorder(), **kw)
    second = simulate(guarded, product_grid(P(1.0), mu=np.linspace(0.2, 3, 50)), make_key(1), 10,
                      record=_fresh_recorder(), **kw)
    assert first.info.compilations >= 1 and first.info.compile_seconds > 0
    assert second.info.compilations == 0
    assert second.info.run_seconds <= second.info.wall_seconds
    assert not np.array_equal(first.record, second.record)

    # 3) the check can fail: a forced retrace (caches dropped) is detected
    rollout_mod.kernels.cache_clear()
    rollout_mod._specs_cached.cache_clear()
    jax.clear_caches()
    with pytest.raises(AssertionError):
        simulate(guarded, product_grid(P(1.0), mu=np.linspace(0.2, 3, 50)), make_key(1), 10,
                 record=_fresh_recorder(), **kw)


def test_compile_timer_and_cache_folder(tmp_path):
    with CompileTimer() as timer:
        jax.jit(lambda x: jnp.sin(x) * 3.0 + x.sum())(jnp.arange(7.0)).block_until_ready()
    assert timer.compilations >= 1 and 0 < timer.compile_seconds <= timer.wall_seconds
    folder = tmp_path / "cache"
    previous = jax.config.jax_compilation_cache_dir
    previous_min = jax.config.jax_persistent_cache_min_compile_time_secs
    try:
        assert enable_compile_cache(folder) == folder and folder.is_dir()
        assert jax.config.jax_compilation_cache_dir == str(folder)
        # every kernel is stored: the accountants' many small kernels count on a warm run
        assert jax.config.jax_persistent_cache_min_compile_time_secs == 0.0
    finally:
        jax.config.update("jax_compilation_cache_dir", previous)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", previous_min)


def test_cpu_compiler_options_reach_the_kernels():
    """``ExecutionHints.cpu_compiler_options`` is what the engine's kernels compile with on CPU: an
    option XLA does not know fails the compile (so the options are passed), the elemental
    emitters give the default options' records (codegen only), and no options means XLA's
    defaults (``compiler_options=None``)."""
    assert kernel_compiler_options(()) is None
    assert kernel_compiler_options(ELEMENTAL_EMITTERS) == {"xla_cpu_use_fusion_emitters": False}
    grid = product_grid(P(1.0), mu=np.linspace(0.1, 5, 4))
    kw = dict(num_seeds=2, grid_ndim=1, record=record.total("total"))
    algorithm = Algorithm(_init, _body)
    unknown = ExecutionHints(cpu_compiler_options=(("xla_no_such_option_here", True),))
    with pytest.raises(Exception, match="xla_no_such_option_here"):
        simulate(algorithm, grid, make_key(0), 10, hints=unknown, **kw)
    plain = simulate(algorithm, grid, make_key(0), 10, **kw).record
    elemental = simulate(algorithm, grid, make_key(0), 10,
                         hints=ExecutionHints(cpu_compiler_options=ELEMENTAL_EMITTERS), **kw).record
    # sums of 10 float32 terms of size <= ~30: a contracted multiply-add moves them by ulps
    np.testing.assert_allclose(np.asarray(elemental), np.asarray(plain), rtol=1e-5)
