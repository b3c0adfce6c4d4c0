"""Resume a sweep from saved seed chunks: the checkpoint store and the application's runner.

:func:`checkpointed` (``checkpointed(folder)``) is a chunk runner for
:func:`ldpjax.engine.simulate` (``runner=``, see :mod:`ldpjax.engine.runner`): it loads the
seed chunks a previous call saved under the same fingerprint, computes the others and saves each
one as soon as it is finished, so rerunning an interrupted call resumes it with the same
records, bit for bit (a chunk's records depend only on ``(key, seed, step)``). :func:`shared`
is the same runner without a folder. Where several JAX processes are joined
(:func:`ldpjax_experiments.cluster.initialize`) both share the chunks between the processes
(:func:`ldpjax_experiments.cluster.run_shared`): every process computes a share on its own devices, every
process returns the full result, and process 0 alone reads and writes the folder. The
experiments pass ``checkpointed(<out>/chunks)``.

Fingerprint: SHA-256 of the sweep's description (algorithm, hints, recorder, params, inputs,
key digest, horizon, seed offset, grid, ``tag``; :meth:`ldpjax.engine.runner.ChunkWork`'s
``description``) plus ``jax_enable_x64`` and the versions of JAX and ldpjax; a different sweep
never reuses a chunk.

Layout: ``<folder>/<fingerprint[:16]>/chunk-<first>-<stop>.npz`` plus a human-readable
``manifest.json`` describing what the fingerprint covers. A chunk file holds the flattened
leaves of the chunk's result and a metadata record with the full fingerprint, the seed range,
and the shape, dtype and SHA-256 of every leaf. Files are written to a temporary name, flushed
and fsync-ed, then renamed (atomic on POSIX), so a killed process leaves either a complete file
or a stray ``*.tmp-<pid>-<random>`` file that is ignored and removed later (once its
process has ended: two processes may share a checkpoint folder).

On load every check must pass (readable archive, same fingerprint, seed range, leaf count,
shapes, dtypes and checksums, and the shapes this sweep plans); otherwise the chunk is
reported as invalid and recomputed, never used.

A secure key (real data) never reaches a runner: ``simulate`` refuses ``runner`` with one, and
this runner refuses a sweep whose key is one (nothing of a release key is written to disk).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import warnings
from pathlib import Path
from typing import Any

import jax
import numpy as np

import ldpjax
from ldpjax.engine.digest import fingerprint
from ldpjax.engine.runner import ChunkOutcome, ChunkWork
from ldpjax.mechanisms.secure import SECURE_IMPL
from ldpjax_experiments import cluster


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
    """Directory of finished chunks for one simulation fingerprint (see the module doc).

    Example:
      >>> import tempfile
      >>> store = ChunkStore(tempfile.mkdtemp(), "f" * 64, {"what": "example"})
      >>> store.save(0, 2, [np.arange(2.0)])
      >>> store.load(0, 2, 1)[0].tolist(), store.load(2, 4, 1)
      ([0.0, 1.0], None)
    """

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


def sweep_fingerprint(work: ChunkWork) -> tuple[str, dict[str, Any]]:
    """``(fingerprint, description)`` of a sweep's saved chunks: its description plus
    ``jax_enable_x64`` and the JAX and ldpjax versions.

    Example (a work that a runner captured; see :mod:`ldpjax.engine.runner`):
      >>> import jax.numpy as jnp
      >>> from ldpjax.engine import in_process, make_key, simulate
      >>> from ldpjax.demo import CounterParams, noisy_counter
      >>> works = []
      >>> _ = simulate(noisy_counter(), CounterParams(jnp.float32(1.0), jnp.float32(0.5)),
      ...              make_key(0), 3, runner=lambda w: works.append(w) or in_process(w))
      >>> fp, description = sweep_fingerprint(works[0])
      >>> len(fp), description["num_steps"], description["jax"] == jax.__version__
      (64, 3, True)
    """
    description = {
        **work.description,
        "x64": bool(jax.config.jax_enable_x64),
        "jax": jax.__version__,
        "ldpjax": ldpjax.__version__,
    }
    return fingerprint(description), description


def _load(store: ChunkStore | None, work: ChunkWork, first: int, stop: int):
    """A saved chunk, or None when missing, invalid or of other shapes than this sweep plans."""
    if store is None:
        return None
    loaded = store.load(first, stop, len(work.leaf_specs))
    if loaded is not None and [(tuple(x.shape), x.dtype) for x in loaded] != \
            work.expected_shapes(first, stop):
        return None
    return loaded


@dataclasses.dataclass(frozen=True)
class Runner:
    """The application's chunk runner (a ``runner(work) -> ChunkOutcome`` for ``simulate``).

    Attributes:
      checkpoint_dir: folder of saved chunks (None: nothing saved or loaded).
    """

    checkpoint_dir: Path | None = None

    def __call__(self, work: ChunkWork) -> ChunkOutcome:
        if self.checkpoint_dir is not None and \
                str(work.description.get("key", "")).endswith(":" + SECURE_IMPL):
            raise ValueError(
                "a checkpointing runner never runs a secure key (ldpjax.mechanisms.secure_key()):"
                " a release key is never written to disk (a checkpoint's manifest records a "
                "digest of the key) and a one-run release has nothing to resume"
            )
        fp, store = "", None
        if self.checkpoint_dir is not None:
            fp, description = sweep_fingerprint(work)
            if cluster.is_main_process():  # several processes: only process 0 touches it
                store = ChunkStore(self.checkpoint_dir, fp, description)
        if cluster.is_multiprocess():
            return _run_shared(work, store, fp)
        pieces, computed, loaded = [], 0, 0
        for first, stop in work.chunks:
            leaves = _load(store, work, first, stop)
            if leaves is None:
                leaves = work.compute(first, stop, work.progress)
                if store is not None:
                    store.save(first, stop, leaves)
                computed += 1
            else:
                loaded += 1
                work.tell(stop - first)
            pieces.append(leaves)
        return ChunkOutcome(work, pieces, computed, loaded, fp)


def _run_shared(work: ChunkWork, store: ChunkStore | None, fp: str) -> ChunkOutcome:
    """The chunks shared over the joined processes (one seed chunk agreed by all of them)."""
    agreed = cluster.agree(
        cluster.sweep_digest(sorted(work.description.items()), work.num_seeds),
        work.seed_chunk, split_seeds=None if work.seed_chunk_chosen else work.num_seeds,
    )
    work = work.with_seed_chunk(agreed)
    pieces, computed, loaded = cluster.run_shared(
        work.chunks, leaf_specs=work.leaf_specs, num_points=work.num_points,
        seed_chunk=work.seed_chunk,
        load=None if store is None else (lambda first, stop: _load(store, work, first, stop)),
        # over several processes a chunk's progress is told when its round is gathered
        compute=lambda first, stop: work.compute(first, stop, None),
        save=None if store is None else store.save,
        done=work.tell,
    )
    return ChunkOutcome(work, pieces, computed, loaded, fp)


def checkpointed(checkpoint_dir: str | os.PathLike) -> Runner:
    """A runner that saves every finished seed chunk in ``checkpoint_dir`` and reuses the
    chunks of the same sweep on rerun (see the module doc); shared over joined processes.

    Example:
      >>> import tempfile
      >>> import jax.numpy as jnp
      >>> from ldpjax.engine import make_key, record, simulate
      >>> from ldpjax.demo import CounterParams, noisy_counter
      >>> folder = tempfile.mkdtemp()
      >>> run = lambda: simulate(
      ...     noisy_counter(), CounterParams(jnp.float32(1.0), jnp.float32(0.5)), make_key(0),
      ...     4, num_seeds=6, seed_chunk=3, record=record.last("error"),
      ...     runner=checkpointed(folder))
      >>> first, again = run(), run()
      >>> first.info.chunks_computed, again.info.chunks_loaded
      (2, 2)
      >>> bool((first.record == again.record).all())
      True
    """
    if not isinstance(checkpoint_dir, (str, os.PathLike)):
        raise TypeError(
            f"checkpoint_dir must be a folder (str or path), got {type(checkpoint_dir).__name__}")
    return Runner(Path(checkpoint_dir))


def shared() -> Runner:
    """A runner that keeps nothing and shares the seed chunks over joined processes (in one
    process: every chunk computed here, as the engine's default).

    Example:
      >>> shared()
      Runner(checkpoint_dir=None)
    """
    return Runner(None)


__all__ = ["ChunkStore", "Runner", "checkpointed", "shared", "sweep_fingerprint"]
