"""The order in which tests run: module order under pytest-xdist and the early start of long
subprocesses.

* The fast suite runs on two pytest-xdist workers (``-n 2 --dist loadfile``: a module's tests
  stay on one worker, so its ``scope="module"`` fixtures and kernels are made once). Modules
  that set ``SCHEDULE_FIRST = n`` (long subprocess runs, the doctests) are handed out first,
  highest ``n`` first, and the other modules in collection order (xdist's reordering by test
  count is turned off), so both workers finish at about the same time. Without xdist nothing
  is reordered.
* Subprocess runs start early: a test module may define ``start_early(folder)``, which starts
  its long subprocesses (x64 suites, multi-device sweeps) and returns a handle; when one of
  the tests named in its ``START_EARLY_FOR`` is selected, :func:`start_early_subprocesses`
  calls it once collection is done (conftest's ``pytest_collection_finish``), so those
  processes run beside the in-process tests (which leave part of the second core idle)
  instead of while the session waits for them. The module's fixtures take the handle with
  :func:`early_start` (which starts it then if it was not started early). Under pytest-xdist
  nothing starts early (the other worker keeps the second core busy, and a worker does not
  know which modules it will get).
"""

from __future__ import annotations

import os

__all__ = [
    "early_start",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_sessionfinish",
    "start_early_subprocesses",
]

_EARLY: dict[str, object] = {}


def pytest_configure(config):
    """Under pytest-xdist, keep the collection order of the modules (``--dist loadfile`` would
    otherwise sort them by their number of tests), so ``SCHEDULE_FIRST`` decides."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(session, config, items):
    """Under pytest-xdist, run the modules that set ``SCHEDULE_FIRST = n`` first, highest ``n``
    first (module doc), so that the two workers finish together."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item):
        module = getattr(item, "module", None)
        return -float(getattr(module, "SCHEDULE_FIRST", 0) or 0)

    items.sort(key=rank)  # stable: the order inside a module and among the rest is kept


def start_early_subprocesses(session) -> None:
    """Start the early subprocesses of every module with a selected test (module doc);
    conftest's ``pytest_collection_finish`` calls it."""
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # under pytest-xdist the other worker keeps the second core busy instead
    seen = set()
    for item in session.items:
        module = getattr(item, "module", None)
        if module is None or module.__name__ in seen or not hasattr(module, "start_early"):
            continue
        if item.originalname not in getattr(module, "START_EARLY_FOR", ()):
            continue
        seen.add(module.__name__)
        folder = session.config._tmp_path_factory.mktemp(f"early-{module.__name__.split('.')[-1]}")
        _EARLY[module.__name__] = module.start_early(folder)


def pytest_sessionfinish(session, exitstatus):
    """Stop early subprocesses whose tests did not run (``-x``, Ctrl-C)."""
    def stop(handle):
        if isinstance(handle, dict):
            handle = list(handle.values())
        if isinstance(handle, (list, tuple)):
            for part in handle:
                stop(part)
        elif hasattr(handle, "stop"):
            handle.stop()
        elif hasattr(handle, "poll") and handle.poll() is None:
            handle.kill()
            handle.wait()

    stop(list(_EARLY.values()))


def early_start(module_name: str, tmp_path_factory):
    """The handle ``start_early`` returned for ``module_name``, started now if it was not."""
    if module_name not in _EARLY:
        module = __import__(module_name, fromlist=["start_early"])
        folder = tmp_path_factory.mktemp(f"early-{module_name.split('.')[-1]}")
        _EARLY[module_name] = module.start_early(folder)
    return _EARLY[module_name]
