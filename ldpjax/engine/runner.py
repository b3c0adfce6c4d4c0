"""Where a sweep's seed chunks come from and go to: the chunk runner seam of ``simulate``.

:func:`~ldpjax.engine.simulate` plans a sweep as seed chunks ``[first, stop)`` (every grid
point, ``stop - first`` seeds) and computes each chunk as a pure function of ``(key, seed,
step)``. *Which* chunks are computed here, and what happens to them, is up to a **runner**,
a callable the caller passes as ``simulate(..., runner=...)``::

    runner(work: ChunkWork) -> ChunkOutcome

* ``work.chunks`` lists the seed ranges of the plan; ``work.compute(first, stop, progress)``
  computes one on this process's devices and returns its host leaves (shape ``(num_points,
  stop - first) + leaf_spec.shape``; it tells ``progress`` as its time chunks finish, pass None
  to stay silent); ``work.tell(seeds)`` tells the caller's progress of seeds obtained otherwise;
* ``work.description`` is what the records depend on (algorithm, hints, recorder, params,
  inputs, key digest, horizon, seed offset, tag; built by :mod:`ldpjax.engine.digest`, no
  memory addresses), to fingerprint saved chunks or to compare processes;
* ``work.with_seed_chunk(n)`` is the same sweep planned with ``n`` seeds per chunk (e.g. a
  chunk size that several processes agreed on); the records do not depend on the chunking;
* the runner returns :class:`ChunkOutcome` ``(work, pieces, computed, loaded, fingerprint)``:
  the work it ran (``work`` or a ``with_seed_chunk`` of it), the leaves of every chunk of
  ``work.chunks`` in order, how many chunks were computed now and obtained otherwise (loaded
  from a checkpoint), and a fingerprint of the sweep (``""`` if it keeps none).

``simulate`` checks the outcome (same sweep, one piece per chunk, the planned shapes and
dtypes) and merges the pieces. The default runner, :func:`in_process`, computes every chunk in
this process and keeps nothing. The application builds resume-from-checkpoint and sharing the
chunks between joined JAX processes on this seam; the core never imports it.

A secure key (real data) never reaches a runner: ``simulate`` refuses ``runner`` with one (a
runner may write the sweep's description, a digest of the key, or the records to disk).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

import jax
import numpy as np

#: ``progress(n)``: ``n`` more (seed, step) pairs are done.
ProgressFn = Callable[[float], Any]
Leaves = list[np.ndarray]


@dataclasses.dataclass(frozen=True)
class ChunkWork:
    """The seed chunks of one :func:`~ldpjax.engine.simulate` call, as a runner sees them.

    Attributes:
      description: what the records depend on (strings and numbers; see the module doc).
      num_seeds, num_steps, num_points: the sweep's seeds, horizon and grid points.
      seed_chunk: seeds per chunk of this plan.
      seed_chunk_chosen: whether the caller chose ``seed_chunk`` (False: the engine planned it
        from memory, and a runner may make it smaller).
      chunks: ``((first, stop), ...)`` seed ranges, in order.
      leaf_specs: shape and dtype of each leaf of one run (records, then final state).
      progress: the caller's progress callback (``n`` (seed, step) pairs), or None.
    """

    description: Mapping[str, Any]
    num_seeds: int
    num_steps: int
    num_points: int
    seed_chunk: int
    seed_chunk_chosen: bool
    chunks: tuple[tuple[int, int], ...]
    leaf_specs: tuple[jax.ShapeDtypeStruct, ...]
    progress: ProgressFn | None
    _compute: Callable[[int, int, ProgressFn | None], Leaves] = dataclasses.field(repr=False)
    _replan: Callable[[int], ChunkWork] = dataclasses.field(repr=False)
    _call: object = dataclasses.field(repr=False, compare=False)

    def compute(self, first: int, stop: int, progress: ProgressFn | None = None) -> Leaves:
        """Seeds ``[first, stop)`` at every grid point, on this process's devices: host leaves
        ``(num_points, stop - first) + spec.shape``; ``progress`` is told per time chunk."""
        return self._compute(first, stop, progress)

    def tell(self, seeds: int) -> None:
        """Tell the caller's progress that ``seeds`` seeds are done (all their steps)."""
        if self.progress is not None:
            self.progress(seeds * self.num_steps)

    def with_seed_chunk(self, seed_chunk: int) -> ChunkWork:
        """The same sweep planned with ``seed_chunk`` seeds per chunk (at least 1)."""
        if int(seed_chunk) == self.seed_chunk:
            return self
        return self._replan(max(1, int(seed_chunk)))

    def expected_shapes(self, first: int, stop: int) -> list[tuple[tuple[int, ...], np.dtype]]:
        """``(shape, dtype)`` of each leaf of chunk ``[first, stop)``."""
        return [((self.num_points, stop - first) + tuple(s.shape), np.dtype(s.dtype))
                for s in self.leaf_specs]


class ChunkOutcome(NamedTuple):
    """What a runner returns (see the module doc)."""

    work: ChunkWork
    pieces: Sequence[Leaves]
    computed: int
    loaded: int
    fingerprint: str = ""


class ChunkRunner(Protocol):
    """``runner(work) -> ChunkOutcome``: where a sweep's seed chunks come from and go to."""

    def __call__(self, work: ChunkWork) -> ChunkOutcome: ...


def in_process(work: ChunkWork) -> ChunkOutcome:
    """The default runner: compute every chunk here, in order, and keep nothing.

    Example (a runner that counts the chunks, then defers to this one):
      >>> import jax.numpy as jnp
      >>> from ldpjax.engine import make_key, record, simulate
      >>> from ldpjax.demo import CounterParams, noisy_counter
      >>> seen = []
      >>> def counting(work):
      ...     seen.append(len(work.chunks))
      ...     return in_process(work)
      >>> res = simulate(noisy_counter(), CounterParams(jnp.float32(1.0), jnp.float32(0.5)),
      ...                make_key(0), 4, num_seeds=6, seed_chunk=2, record=record.last("error"),
      ...                runner=counting)
      >>> seen, res.info.chunks_computed, res.record.shape
      ([3], 3, (6,))
    """
    pieces = [work.compute(first, stop, work.progress) for first, stop in work.chunks]
    return ChunkOutcome(work, pieces, len(pieces), 0)


def check_outcome(work: ChunkWork, outcome: Any) -> ChunkOutcome:
    """``outcome`` as a :class:`ChunkOutcome` of ``work``'s sweep, or ``ValueError``: a runner
    returns one piece per chunk of the work it ran, of the planned shapes and dtypes."""
    if not isinstance(outcome, ChunkOutcome):
        raise TypeError(f"runner must return a ChunkOutcome, got {type(outcome).__name__}")
    ran = outcome.work
    if not isinstance(ran, ChunkWork) or ran._call is not work._call:
        raise ValueError("runner must return the work it was given (or its with_seed_chunk)")
    if len(outcome.pieces) != len(ran.chunks):
        raise ValueError(
            f"runner returned {len(outcome.pieces)} pieces for {len(ran.chunks)} seed chunks")
    for (first, stop), piece in zip(ran.chunks, outcome.pieces, strict=True):
        got = [(tuple(np.shape(x)), np.asarray(x).dtype) for x in piece]
        if got != ran.expected_shapes(first, stop):
            raise ValueError(
                f"runner returned seeds [{first}, {stop}) with leaves {got}, expected "
                f"{ran.expected_shapes(first, stop)}")
    return outcome


__all__ = ["ChunkOutcome", "ChunkRunner", "ChunkWork", "in_process"]
