"""How the suite is scheduled on pytest-xdist workers (tests/plugins/schedule.py) and how its
memory is bounded (tests/plugins/memory.py)."""

from __future__ import annotations

import types

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
    monkeypatch.setattr(memory, "_return_freed_memory", lambda: None)
    monkeypatch.setattr(memory.jax, "clear_caches", lambda: calls.append("clear"))

    assert memory._drop_if_over(1000.0) is False
    assert calls == []  # below the limit: not even a garbage collection

    def collect_frees_enough():
        calls.append("gc")
        resident["mb"] = 900.0

    resident["mb"] = 1200.0
    monkeypatch.setattr(memory.gc, "collect", collect_frees_enough)
    assert memory._drop_if_over(1000.0) is False
    assert calls == ["gc"]  # the collection brought it under: the kernels stay

    calls.clear()
    resident["mb"] = 1200.0
    monkeypatch.setattr(memory.gc, "collect", lambda: calls.append("gc"))
    assert memory._drop_if_over(1000.0) is True
    assert calls == ["gc", "clear", "gc"]


def test_kernels_are_dropped_between_tests_of_one_module_above_one_and_a_half_limits(
        monkeypatch):
    dropped = []
    monkeypatch.setattr(memory, "_free_kernels", lambda: dropped.append(1))
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
    assert dropped == [1]


def test_conftest_holds_every_plugin_hook_and_fixture(monkeypatch):
    # pytest finds only the hooks and fixtures in conftest's namespace: each plugin's own must be
    # there, and the two that share pytest_collection_finish run from conftest's, in order
    from tests import conftest
    from tests.plugins import compile_cache, profile

    for plugin in (compile_cache, memory, profile, schedule):
        for name in dir(plugin):
            if name.startswith("pytest_") or name == "_drop_compiled_kernels":
                assert getattr(conftest, name, None) is getattr(plugin, name), name
    calls = []
    monkeypatch.setattr(conftest, "freeze_collected_objects", lambda: calls.append("freeze"))
    monkeypatch.setattr(conftest, "start_early_subprocesses", lambda s: calls.append(s))
    conftest.pytest_collection_finish("session")
    assert calls == ["freeze", "session"]
