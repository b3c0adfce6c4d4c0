"""Shared test configuration.

* Tests run in JAX's default precision (float32) unless they ask for the ``x64`` fixture,
  which enables float64 for that test only (accounting accuracy, finite differences).
* ``@pytest.mark.slow`` marks long statistical / full-size tests; the Quickstart/CI command
  deselects them with ``-m "not slow"``.
* The fast suite runs on two pytest-xdist workers (``-n 2 --dist loadfile``: a module's tests
  stay on one worker, so its ``scope="module"`` fixtures and kernels are made once). Modules
  that set ``SCHEDULE_FIRST = n`` (long subprocess runs, the doctests) are handed out first,
  highest ``n`` first, and the other modules in collection order (xdist's reordering by test
  count is turned off), so both workers finish at about the same time. Without xdist nothing
  is reordered.
* After a test module, if the process holds more than ``LDPJAX_TEST_CACHE_MB`` (default 1000
  MiB), garbage is collected and freed memory handed back to the OS, and if it still holds
  more, JAX's compilation caches are dropped (:func:`_drop_compiled_kernels`); between two
  tests of one module they are dropped above 1.5 times that (:func:`pytest_runtest_teardown`).
  Each compiled kernel holds about a megabyte; kernels kept across modules are reused, but
  keeping all of them made one process grow past 2 GB. A full garbage collection costs a few
  tenths of a second in a process this size, so it runs only above the limit. For the same
  reason the objects that exist once collection is done (modules, functions, the test items)
  are frozen (``gc.freeze``): Python's own full collections then skip them.
  ``LDPJAX_TEST_KEEP_CACHES=1`` never drops them (to measure the difference).
* Compiled kernels persist between runs of the suite: JAX's persistent compilation cache is
  on for the whole session, in ``LDPJAX_TEST_COMPILE_CACHE`` (default
  ``$XDG_CACHE_HOME/ldpjax/tests``, i.e. ``~/.cache/ldpjax/tests``; ``off`` turns it off).
  Loading a kernel from it is an order of magnitude cheaper than compiling it on a small CPU,
  so a second run of the suite skips most of its compilation; the first run stores every kernel.
  The folder is trimmed to ``LDPJAX_TEST_COMPILE_CACHE_MB`` (default 2000 MiB), least
  recently used first, when a session starts. ``LDPJAX_CACHE_DIR`` is pointed at it too, so
  the CLI (``ldpjax run`` / ``reproduce``, in this process or in a subprocess) never writes
  into the user's own cache; with ``off`` it points at a folder removed after the session.
* ``LDPJAX_TEST_CPU_LOG=FILE`` appends one line per test (node id, CPU seconds of this
  process and its finished subprocesses, wall seconds, this process's peak RSS in MiB so
  far, then JAX's trace, lowering and backend-compile seconds and the number of backend
  compilations, the pytest-xdist worker and the time the test ended): a per-test profile
  that stays meaningful when other jobs share the cores (``--durations`` reports wall time
  only).
* Subprocess runs start early: a test module may define ``start_early(folder)``, which starts
  its long subprocesses (x64 suites, multi-device sweeps) and returns a handle; when one of
  the tests named in its ``START_EARLY_FOR`` is selected, conftest calls it once collection is
  done, so those processes run beside
  the in-process tests (which leave part of the second core idle) instead of while the session
  waits for them. The module's fixtures take the handle with :func:`early_start` (which starts
  it then if it was not started early). Under pytest-xdist nothing starts early (the other
  worker keeps the second core busy, and a worker does not know which modules it will get).
* ``REPO`` and ``SHARED_DATA`` locate the repository and ``../shared/data`` (tests that need
  real data skip when it is absent).
"""

from __future__ import annotations

import gc
import os
import resource
import time
from pathlib import Path

import jax
import pytest

import ldpjax  # noqa: F401  (first: applies the XLA CPU workaround before any computation)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LDPJAX_SHARED_DATA", REPO.parent / "shared" / "data"))


CACHE_LIMIT_MB = float(os.environ.get("LDPJAX_TEST_CACHE_MB", "1000"))


def _compile_cache_root() -> Path | None:
    """The suite's persistent compilation cache folder, or None when turned off (module doc)."""
    value = os.environ.get("LDPJAX_TEST_COMPILE_CACHE", "")
    if value.lower() in ("off", "0", "none", "no"):
        return None
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ldpjax" / "tests"


def _trim_folder(folder: Path, limit_mb: float) -> None:
    """Delete the least recently used files of ``folder`` until it holds at most half of
    ``limit_mb`` (nothing is deleted while it holds less than ``limit_mb``)."""
    try:
        files = [(f.stat(), f) for f in folder.rglob("*") if f.is_file()]
    except OSError:
        return
    total = sum(st.st_size for st, _ in files)
    if total <= limit_mb * 2**20:
        return
    for st, f in sorted(files, key=lambda item: max(item[0].st_atime, item[0].st_mtime)):
        if total <= limit_mb * 2**19:
            break
        try:
            f.unlink()
            total -= st.st_size
        except OSError:
            pass


def _setup_compile_cache() -> None:
    from ldpjax.engine.compile import default_cache_dir, enable_compile_cache

    root = _compile_cache_root()
    if root is None:
        import atexit
        import shutil
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="ldpjax-test-cache-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        os.environ["LDPJAX_CACHE_DIR"] = str(root)  # the CLI's cache: a throwaway folder
        return
    os.environ["LDPJAX_CACHE_DIR"] = str(root)  # the CLI (here and in subprocesses) uses it
    try:
        folder = default_cache_dir()
        _trim_folder(folder, float(os.environ.get("LDPJAX_TEST_COMPILE_CACHE_MB", "2000")))
        enable_compile_cache(folder, min_compile_seconds=0.0)
    except OSError as err:  # an unwritable folder: run without the cache
        print(f"conftest: persistent compilation cache off ({err})")


_setup_compile_cache()


def _resident_mb() -> float:
    """This process's resident memory now (Linux; 0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0


def _return_freed_memory() -> None:
    """Give the allocator's freed pages back to the OS (glibc ``malloc_trim``), so that the
    resident size measures what is held, not what was once used."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _free_kernels() -> None:
    """Drop JAX's compiled kernels and traces, collect the garbage, hand memory back."""
    jax.clear_caches()
    gc.collect()
    _return_freed_memory()


def _drop_if_over(limit_mb: float) -> bool:
    """Free the compiled kernels if the process holds more than ``limit_mb`` after a garbage
    collection; True if it did. Below the limit nothing runs (not even the collection, which
    costs a few tenths of a second in a process this size)."""
    if _resident_mb() <= limit_mb:
        return False
    gc.collect()
    _return_freed_memory()
    if _resident_mb() <= limit_mb:
        return False
    _free_kernels()
    return True


def pytest_runtest_teardown(item, nextitem):
    """Between two tests of one module, free the compiled kernels once the process holds more
    than ``1.5 * LDPJAX_TEST_CACHE_MB`` (a module that compiles hundreds of kernels, such as
    the doctests, would otherwise hold them all until it ends)."""
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") == "1" or nextitem is None:
        return
    same_module = getattr(nextitem, "module", None) is getattr(item, "module", 0)
    if same_module and _resident_mb() > 1.5 * CACHE_LIMIT_MB:
        _free_kernels()


@pytest.fixture(scope="module", autouse=True)
def _drop_compiled_kernels():
    """Once a module's tests are done, free the compiled kernels if the process holds more than
    ``LDPJAX_TEST_CACHE_MB`` (see the module doc)."""
    yield
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") != "1":
        _drop_if_over(CACHE_LIMIT_MB)


_JAX_DURATIONS: dict[str, float] = {}
_JAX_COUNTS: dict[str, int] = {}


def _record_jax_duration(event: str, seconds: float, **_: object) -> None:
    _JAX_DURATIONS[event] = _JAX_DURATIONS.get(event, 0.0) + seconds
    _JAX_COUNTS[event] = _JAX_COUNTS.get(event, 0) + 1


if os.environ.get("LDPJAX_TEST_CPU_LOG"):
    jax.monitoring.register_event_duration_secs_listener(_record_jax_duration)

_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)


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


def pytest_collection_finish(session):
    """Freeze what collection made; start the early subprocesses of every module with a
    selected test (module doc)."""
    gc.collect()
    gc.freeze()
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


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    log = os.environ.get("LDPJAX_TEST_CPU_LOG")
    if not log:
        yield
        return
    _JAX_DURATIONS.clear()
    _JAX_COUNTS.clear()
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
    compile_columns = "\t".join(f"{_JAX_DURATIONS.get(e, 0.0):.3f}" for e in _COMPILE_EVENTS)
    compiles = _JAX_COUNTS.get(_COMPILE_EVENTS[-1], 0)
    with open(log, "a") as f:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        f.write(f"{item.nodeid}\t{cpu:.3f}\t{wall:.3f}\t{peak:.0f}\t{compile_columns}\t{compiles}"
                f"\t{worker}\t{time.time():.2f}\n")


@pytest.fixture
def x64():
    """Enable float64 for one test."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} not present")
    return SHARED_DATA
