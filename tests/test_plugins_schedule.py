"""How the suite is scheduled on pytest-xdist workers (tests/plugins/schedule.py) and how its
memory is bounded (tests/plugins/memory.py)."""

from __future__ import annotations

import gc
import types

import numpy as np
import pytest

from tests.plugins import memory, schedule


def _items(spec):
    """Fake collected items: (module name, SCHEDULE_FIRST or None, test name) each."""
    modules = {}
    items = []
    for module_name, first, test in spec:
        if module_name not in modules:
            module = types.ModuleType(module_name)
            if first is not None:
                module.SCHEDULE_FIRST = first
            modules[module_name] = module
        items.append(types.SimpleNamespace(module=modules[module_name], name=test))
    return items


SPEC = [
    ("a", None, "a1"), ("a", None, "a2"),
    ("slowish", 1, "s1"),
    ("b", None, "b1"),
    ("longest", 6, "l1"), ("longest", 6, "l2"),
    ("c", 0, "c1"),
]


def test_xdist_workers_hand_out_the_long_modules_first(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    items = _items(SPEC)
    schedule.pytest_collection_modifyitems(None, None, items)
    # highest SCHEDULE_FIRST first; the order inside a module and among the rest is kept
    assert [i.name for i in items] == ["l1", "l2", "s1", "a1", "a2", "b1", "c1"]


def test_without_xdist_nothing_is_reordered(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    items = _items(SPEC)
    schedule.pytest_collection_modifyitems(None, None, items)
    assert [i.name for i in items] == [name for _, _, name in SPEC]


def test_xdist_keeps_the_collection_order_of_the_modules():
    config = types.SimpleNamespace(option=types.SimpleNamespace(loadscopereorder=True))
    schedule.pytest_configure(config)
    assert config.option.loadscopereorder is False
    plain = types.SimpleNamespace(option=types.SimpleNamespace())  # xdist not installed
    schedule.pytest_configure(plain)
    assert not hasattr(plain.option, "loadscopereorder")


def test_kernels_are_dropped_only_above_the_limit(monkeypatch):
    calls = []
    resident = {"mb": 500.0}
    monkeypatch.setattr(memory, "_resident_mb", lambda: resident["mb"])
    monkeypatch.setattr(memory.gc, "collect", lambda: calls.append("gc"))
    monkeypatch.setattr(memory.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(memory.gc, "unfreeze", lambda: calls.append("unfreeze"))
    monkeypatch.setattr(memory, "_return_freed_memory", lambda: None)
    monkeypatch.setattr(memory, "_drop_lowered_modules", lambda: calls.append("lowered") or True)
    monkeypatch.setattr(memory.jax, "clear_caches", lambda: calls.append("clear"))

    assert memory._drop_if_over(1000.0) is False
    assert calls == []  # below the limit: nothing runs, not even a garbage collection

    def frees_enough():
        calls.append("lowered")
        resident["mb"] = 900.0
        return True

    resident["mb"] = 1200.0
    monkeypatch.setattr(memory, "_drop_lowered_modules", frees_enough)
    assert memory._drop_if_over(1000.0) is False
    assert calls == ["lowered"]  # the lowered modules were enough: no collection, kernels stay

    calls.clear()
    resident["mb"] = 1200.0
    monkeypatch.setattr(memory, "_drop_lowered_modules", lambda: calls.append("lowered") or True)
    assert memory._drop_if_over(1000.0) is True
    # then the kernels, and a collection that sees the frozen objects too, whose survivors
    # are frozen again
    assert calls == ["lowered", "clear", "unfreeze", "gc", "freeze"]

    calls.clear()  # a JAX that keeps its lowered modules elsewhere: straight to the kernels
    monkeypatch.setattr(memory, "_drop_lowered_modules", lambda: calls.append("lowered") and False)
    assert memory._drop_if_over(1000.0) is True
    assert calls == ["lowered", "clear", "unfreeze", "gc", "freeze"]


def test_a_module_end_freezes_what_survives(monkeypatch):
    calls = []
    monkeypatch.delenv("LDPJAX_TEST_KEEP_CACHES", raising=False)
    monkeypatch.setattr(memory, "_drop_if_over", lambda limit: calls.append(limit))
    monkeypatch.setattr(memory.gc, "freeze", lambda: calls.append("freeze"))
    fixture = memory._drop_compiled_kernels.__wrapped__()
    next(fixture)
    with pytest.raises(StopIteration):
        next(fixture)
    assert calls == [memory.CACHE_LIMIT_MB, "freeze"]


def test_dropping_lowered_modules_frees_memory_and_keeps_the_kernels():
    # the real JAX: compiled functions keep running without a new compilation, and the MLIR
    # contexts of their lowered modules (one per module, about 1 MiB each) are gone
    import jax
    import jax.numpy as jnp

    functions = [jax.jit(lambda x, k=k: jnp.sin(x) * k) for k in range(8)]
    ones = jnp.ones(3)
    for f in functions:
        f(ones).block_until_ready()

    def contexts():
        return sum(type(o).__name__ == "JaxIrContext" for o in gc.get_objects())

    before = contexts()
    if not memory._drop_lowered_modules():
        pytest.skip("this JAX keeps its lowered modules elsewhere")
    gc.collect()
    assert contexts() <= before - 8
    compiled = []
    listener = lambda event, *_, **__: compiled.append(event)  # noqa: E731
    jax.monitoring.register_event_listener(listener)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        values = [np.asarray(f(ones))[0] for f in functions]
    finally:
        jax.monitoring.unregister_event_listener(listener)
        jax.monitoring.unregister_event_duration_listener(listener)
    assert values == pytest.approx([np.sin(1.0) * k for k in range(8)])
    assert not [e for e in compiled if "compile" in e], compiled


def test_kernels_are_dropped_between_tests_of_one_module_above_one_and_a_half_limits(
        monkeypatch):
    dropped = []
    monkeypatch.setattr(memory, "_drop_if_over", dropped.append)
    monkeypatch.delenv("LDPJAX_TEST_KEEP_CACHES", raising=False)
    first, second, other = _items([("m", None, "t1"), ("m", None, "t2"), ("n", None, "u1")])
    monkeypatch.setattr(memory, "_resident_mb", lambda: 1.4 * memory.CACHE_LIMIT_MB)
    memory.pytest_runtest_teardown(first, second)
    assert dropped == []
    monkeypatch.setattr(memory, "_resident_mb", lambda: 1.6 * memory.CACHE_LIMIT_MB)
    memory.pytest_runtest_teardown(second, other)  # the module's end: its fixture decides
    memory.pytest_runtest_teardown(second, None)
    assert dropped == []
    memory.pytest_runtest_teardown(first, second)
    assert dropped == [1.5 * memory.CACHE_LIMIT_MB]


def test_conftest_holds_every_plugin_hook_and_fixture(monkeypatch):
    # pytest finds only the hooks and fixtures in conftest's namespace: each plugin's own must be
    # there, and the two that share pytest_collection_finish run from conftest's, in order
    from tests import conftest
    from tests.plugins import compile_cache, profile

    for plugin in (compile_cache, memory, profile, schedule):
        for name in dir(plugin):
            if name.startswith("pytest_") or name in ("_drop_compiled_kernels", "lean_worker"):
                assert getattr(conftest, name, None) is getattr(plugin, name), name
    calls = []
    monkeypatch.setattr(conftest, "freeze_collected_objects", lambda: calls.append("freeze"))
    monkeypatch.setattr(conftest, "start_early_subprocesses", lambda s: calls.append(s))
    conftest.pytest_collection_finish("session")
    assert calls == ["freeze", "session"]


def test_collection_end_freezes_and_spaces_the_collections_out(monkeypatch):
    calls = []
    monkeypatch.setattr(memory.gc, "collect", lambda: calls.append("gc"))
    monkeypatch.setattr(memory.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(memory.gc, "set_threshold", lambda *t: calls.append(t))
    memory.freeze_collected_objects()
    assert calls == ["gc", "freeze", memory.GC_THRESHOLDS]
    assert memory.GC_THRESHOLDS[0] > gc.get_threshold()[0] or gc.get_threshold() == \
        memory.GC_THRESHOLDS  # under pytest the suite's own thresholds are already set


def test_lean_worker_drops_above_half_the_limit_then_above_its_floor(monkeypatch):
    calls = []
    monkeypatch.delenv("LDPJAX_TEST_KEEP_CACHES", raising=False)
    monkeypatch.setitem(memory._LEAN, "floor_mb", 0.0)
    monkeypatch.setattr(memory, "_drop_if_over", lambda limit: calls.append(limit) or True)
    monkeypatch.setattr(memory, "_resident_mb", lambda: 700.0)  # held after the drop
    memory.lean_worker.__wrapped__()
    assert calls == [memory.CACHE_LIMIT_MB / 2]
    memory.lean_worker.__wrapped__()  # the floor (imports, mostly) is not dropped again
    assert calls == [memory.CACHE_LIMIT_MB / 2, 800.0]
    monkeypatch.setenv("LDPJAX_TEST_KEEP_CACHES", "1")
    memory.lean_worker.__wrapped__()
    assert len(calls) == 2
