"""The suite's persistent compilation cache (tests/plugins/compile_cache.py): where it lives,
that the CLI is pointed at it, and how the folder is trimmed."""

from __future__ import annotations

import os
from pathlib import Path

import jax

from tests.plugins import compile_cache


def test_the_session_cache_is_on_and_the_cli_uses_it():
    root = compile_cache._compile_cache_root()
    if root is None:  # LDPJAX_TEST_COMPILE_CACHE=off: the CLI gets a throwaway folder
        assert Path(os.environ["LDPJAX_CACHE_DIR"]).name.startswith("ldpjax-test-cache-")
        return
    assert os.environ["LDPJAX_CACHE_DIR"] == str(root)
    assert jax.config.jax_compilation_cache_dir == str(root / "jax-compile")


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LDPJAX_TEST_COMPILE_CACHE", str(tmp_path / "here"))
    assert compile_cache._compile_cache_root() == tmp_path / "here"
    for off in ("off", "0", "none", "OFF"):
        monkeypatch.setenv("LDPJAX_TEST_COMPILE_CACHE", off)
        assert compile_cache._compile_cache_root() is None
    monkeypatch.delenv("LDPJAX_TEST_COMPILE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache._compile_cache_root() == tmp_path / "xdg" / "ldpjax" / "tests"


def _file(folder: Path, name: str, size: int, used: float) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    os.utime(path, (used, used))
    return path


def test_trim_keeps_a_small_folder_and_drops_the_least_recently_used(tmp_path):
    mib = 2**20
    files = [_file(tmp_path, f"k{i}-cache", mib, 1_000_000 + i) for i in range(6)]  # 6 MiB
    compile_cache._trim_folder(tmp_path, limit_mb=6)  # at the limit: nothing goes
    assert all(f.exists() for f in files)
    compile_cache._trim_folder(tmp_path, limit_mb=5)  # over it: down to half (2.5 MiB)
    # the oldest go first; 2 MiB of the newest stay (3 would exceed 2.5)
    assert [f.exists() for f in files] == [False] * 4 + [True] * 2
    compile_cache._trim_folder(tmp_path / "missing", limit_mb=1)  # a missing folder is no error
