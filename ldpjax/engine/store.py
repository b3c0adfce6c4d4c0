"""Crash-safe storage of finished seed chunks, so an interrupted sweep resumes.

Layout: ``<checkpoint_dir>/<fingerprint[:16]>/chunk-<first>-<stop>.npz`` plus a human-readable
``manifest.json`` describing what the fingerprint covers. A chunk file holds the flattened
leaves of the chunk's result and a metadata record with the full fingerprint, the seed range,
and the shape, dtype and SHA-256 of every leaf. Files are written to a temporary name, flushed
and fsync-ed, then renamed (atomic on POSIX), so a killed process leaves either a complete file
or a stray ``*.tmp-<pid>-<random>`` file that is ignored and removed later (once its
process has ended: two processes may share a checkpoint folder).

On load every check must pass (readable archive, same fingerprint, seed range, leaf count,
shapes, dtypes and checksums); otherwise the chunk is reported as invalid and recomputed, never
used.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import warnings
from pathlib import Path
from typing import Any

import numpy as np


def _temp_name(final: Path) -> Path:
    """A temporary name unique to this process and call: ``<name>.tmp-<pid>-<random>``."""
    return final.with_name(f"{final.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def _owner_alive(tmp: Path) -> bool:
    """Whether the process that named ``tmp`` (``*.tmp-<pid>[-...]``) still runs (same host)."""
    try:
        pid = int(tmp.name.rsplit(".tmp-", 1)[1].split("-")[0])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid() or os.name == "nt":  # Windows: os.kill(pid, 0) is not a probe
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _discard(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


class ChunkStore:
    """Directory of finished chunks for one simulation fingerprint."""

    def __init__(self, root: str | os.PathLike, fingerprint: str, description: dict[str, Any]):
        self.fingerprint = fingerprint
        self.dir = Path(root) / fingerprint[:16]
        self.dir.mkdir(parents=True, exist_ok=True)
        manifest = self.dir / "manifest.json"
        if not manifest.exists():
            tmp = _temp_name(manifest)
            try:
                tmp.write_text(json.dumps({"fingerprint": fingerprint, **description}, indent=2))
                os.replace(tmp, manifest)
            except BaseException:
                _discard(tmp)
                raise
        for stale in self.dir.glob("*.tmp-*"):
            # another live process may be writing its own temporary file here: keep those
            if not _owner_alive(stale):
                _discard(stale)

    def path(self, first: int, stop: int) -> Path:
        return self.dir / f"chunk-{first:010d}-{stop:010d}.npz"

    def save(self, first: int, stop: int, leaves: list[np.ndarray]) -> None:
        leaves = [np.asarray(x) for x in leaves]
        meta = {
            "fingerprint": self.fingerprint,
            "first": first,
            "stop": stop,
            "leaves": [
                {"shape": list(x.shape), "dtype": str(x.dtype), "sha256": _digest(x)} for x in leaves
            ],
        }
        arrays = {f"leaf_{i:04d}": x for i, x in enumerate(leaves)}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        final = self.path(first, stop)
        tmp = _temp_name(final)
        try:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:  # full disk, interrupt: leave no partial temporary file behind
            _discard(tmp)
            raise

    def load(self, first: int, stop: int, num_leaves: int) -> list[np.ndarray] | None:
        """The chunk's leaves, or None if absent; invalid files are reported and ignored."""
        path = self.path(first, stop)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                if meta.get("fingerprint") != self.fingerprint:
                    raise ValueError("fingerprint mismatch")
                if (meta.get("first"), meta.get("stop")) != (first, stop):
                    raise ValueError("seed range mismatch")
                specs = meta["leaves"]
                if len(specs) != num_leaves:
                    raise ValueError(f"expected {num_leaves} leaves, found {len(specs)}")
                leaves = []
                for i, spec in enumerate(specs):
                    arr = np.array(data[f"leaf_{i:04d}"])
                    if list(arr.shape) != spec["shape"] or str(arr.dtype) != spec["dtype"]:
                        raise ValueError(f"leaf {i} shape/dtype mismatch")
                    if _digest(arr) != spec["sha256"]:
                        raise ValueError(f"leaf {i} checksum mismatch")
                    leaves.append(arr)
            return leaves
        except Exception as err:  # noqa: BLE001 - any failure means "recompute"
            warnings.warn(
                f"ldpjax: ignoring invalid chunk file {path} ({type(err).__name__}: {err}); "
                "it will be recomputed",
                RuntimeWarning,
                stacklevel=2,
            )
            return None


__all__ = ["ChunkStore"]
