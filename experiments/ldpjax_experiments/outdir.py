"""Output folders of experiment runs: checked before any computation, locked while in use.

:func:`claim_output_dir` is what :func:`~ldpjax_experiments.runner.run_experiment` and
``ldpjax reproduce`` use before they compute anything:

* the path must be a folder (or creatable as one), writable, on a file system with at least
  :func:`required_free_bytes` free; otherwise :class:`OutputDirError` (a ``ValueError`` whose
  message is one line) and nothing is created;
* a lock file (``.ldpjax.lock``, holding the PID) keeps two runs from sharing the folder: the
  second gets :class:`OutputDirError` naming the first's PID. The lock is an ``flock`` on that
  file, so a lock left by a dead process is free again and taken over;
* if the run is refused (a ``ValueError`` escapes, e.g. a bad option value found by the
  experiment's validation), the folders this claim created are removed again, so a refused run
  leaves no folder behind. An interrupt or any other error keeps them: finished checkpoint
  chunks are what lets the same command resume.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = ".ldpjax.lock"
# Tables, figures, run.json and the checkpoint chunks of a default-size run are a few MB; 64 MiB
# leaves room for the paper-size sweeps' chunks too (the largest measured: ~20 MB).
DEFAULT_FREE_MB = 64


class OutputDirError(ValueError):
    """The output folder cannot be used (one-line message for the command line)."""


def required_free_bytes() -> int:
    """Free space demanded before a run: ``$LDPJAX_MIN_FREE_MB`` MiB (default 64)."""
    text = os.environ.get("LDPJAX_MIN_FREE_MB", "")
    try:
        mb = float(text) if text.strip() else DEFAULT_FREE_MB
    except ValueError:
        mb = DEFAULT_FREE_MB
    return int(max(mb, 0.0) * 2**20)


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_output_dir(path: str | os.PathLike, *, free_bytes: int | None = None) -> Path:
    """Refuse (``OutputDirError``) a path that is a file, sits under a file, is not writable or
    lacks ``free_bytes`` of free space. Creates nothing; returns the absolute path."""
    out = Path(path).expanduser().absolute()
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"output folder {str(out)!r} is a file, not a folder")
    base = _nearest_existing(out)
    if not base.is_dir():
        raise OutputDirError(f"cannot create output folder {str(out)!r}: {str(base)!r} is a file")
    if not os.access(base, os.W_OK | os.X_OK):
        raise OutputDirError(f"output folder {str(out)!r} is not writable ({str(base)!r} "
                             "does not allow writing)")
    need = required_free_bytes() if free_bytes is None else int(free_bytes)
    try:
        usage = shutil.disk_usage(base)
    except OSError:
        usage = None
    free = usage.free if usage is not None and usage.total > 0 else None  # total 0: /proc etc.
    if free is not None and free < need:
        raise OutputDirError(
            f"not enough free space for output folder {str(out)!r}: {free / 2**20:.1f} MiB free, "
            f"a run needs about {need / 2**20:.0f} MiB (set LDPJAX_MIN_FREE_MB to change)")
    return out


class _Lock:
    """An exclusive ``flock`` on ``folder/.ldpjax.lock`` (POSIX; no lock where fcntl is missing)."""

    def __init__(self, folder: Path):
        self.path = folder / LOCK_NAME
        self.fd: int | None = None

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no lock (the PID file is informative)
            fcntl = None
        for _ in range(10):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as err:
                raise OutputDirError(f"output folder {str(self.path.parent)!r} is not writable "
                                     f"({err.strerror})") from None
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    holder = self._holder(fd)
                    os.close(fd)
                    raise self._busy(holder) from None
                # the holder may have removed the file between our open and flock: retry
                try:
                    same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    continue
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError as err:
                os.close(fd)
                raise OutputDirError(f"cannot write to output folder {str(self.path.parent)!r} "
                                     f"({err.strerror})") from None
            self.fd = fd
            return
        raise OutputDirError(f"could not lock output folder {str(self.path.parent)!r}")

    def _holder(self, fd: int) -> int | None:
        try:
            return int(os.pread(fd, 32, 0).decode().strip() or "x")
        except (OSError, ValueError):
            return None

    def _busy(self, holder: int | None) -> OutputDirError:
        who = f"(PID {holder}) " if holder is not None else ""
        return OutputDirError(
            f"another ldpjax run {who}is using output folder {str(self.path.parent)!r}; wait "
            "for it to finish or choose another --out")

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still locked: a waiting run re-checks the inode
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = None


@contextlib.contextmanager
def claim_output_dir(path: str | os.PathLike, *, free_bytes: int | None = None) -> Iterator[Path]:
    """Check, create and lock an output folder for the duration of a run (see module doc)."""
    out = check_output_dir(path, free_bytes=free_bytes)
    missing = []
    probe = out
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    top_created = missing[-1] if missing else None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        _remove(top_created)
        raise OutputDirError(f"output folder {str(out)!r} is not writable: cannot create it "
                             f"({err.strerror or err})") from None
    lock = _Lock(out)
    try:
        lock.acquire()
    except BaseException:
        _remove(top_created)
        raise
    try:
        yield out
    except ValueError:
        lock.release()
        _remove(top_created)
        raise
    finally:
        lock.release()


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = ["LOCK_NAME", "OutputDirError", "check_output_dir", "claim_output_dir",
           "required_free_bytes"]
