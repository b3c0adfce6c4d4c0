"""The suite's persistent compilation cache.

Compiled kernels persist between runs of the suite: JAX's persistent compilation cache is on
for the whole session, in ``LDPJAX_TEST_COMPILE_CACHE`` (default
``$XDG_CACHE_HOME/ldpjax/tests``, i.e. ``~/.cache/ldpjax/tests``; ``off`` turns it off).
Loading a kernel from it is an order of magnitude cheaper than compiling it on a small CPU,
so a second run of the suite skips most of its compilation; the first run stores every kernel.
The folder is trimmed to ``LDPJAX_TEST_COMPILE_CACHE_MB`` (default 2000 MiB), least
recently used first, when a session starts (by pytest's own process, not by each
pytest-xdist worker). ``LDPJAX_CACHE_DIR`` is pointed at it too, so
the CLI (``ldpjax run`` / ``reproduce``, in this process or in a subprocess) never writes
into the user's own cache; with ``off`` it points at a folder removed after the session.

``tests/conftest.py`` calls :func:`setup_compile_cache` once, when it is imported.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["setup_compile_cache"]


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


def setup_compile_cache() -> None:
    """Turn the session's compilation cache on and point ``LDPJAX_CACHE_DIR`` at it (module
    doc)."""
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
        if not os.environ.get("PYTEST_XDIST_WORKER"):  # once per session: not in each worker
            _trim_folder(folder, float(os.environ.get("LDPJAX_TEST_COMPILE_CACHE_MB", "2000")))
        enable_compile_cache(folder, min_compile_seconds=0.0)
    except OSError as err:  # an unwritable folder: run without the cache
        print(f"conftest: persistent compilation cache off ({err})")
