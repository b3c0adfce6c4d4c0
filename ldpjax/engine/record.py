"""Recorders: reduce per-step outputs inside the scan so memory is O(state), not O(T x state).

A :class:`Recorder` is a small ``NamedTuple`` of pure functions (like an optax transformation):

* ``init(outputs_spec, num_steps) -> acc`` from the abstract (``ShapeDtypeStruct``) step outputs;
* ``update(acc, outputs, t, num_steps) -> acc`` at step t (0-based, global);
* ``finalize(acc, num_steps) -> record`` once, at the end of the run;
* ``spec``: a string that identifies the recorder (used to fingerprint saved chunks).

Every recorder takes ``select``, a function applied to the step outputs first (e.g.
``lambda out: out.gain``), so only what is needed is kept.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.types import PyTree

Select = Callable[[PyTree], PyTree] | None


class Recorder(NamedTuple):
    init: Callable[[PyTree, int], PyTree]
    update: Callable[[PyTree, PyTree, Any, int], PyTree]
    finalize: Callable[[PyTree, int], PyTree]
    spec: str


def _apply(select: Select, outputs: PyTree) -> PyTree:
    return outputs if select is None else select(outputs)


def _select_spec(select: Select, spec: PyTree) -> PyTree:
    return jax.eval_shape(lambda o: _apply(select, o), spec)


def _name(select: Select) -> str:
    """Identify a select function by name and code (two lambdas in one module differ)."""
    if select is None:
        return "all"
    name = f"{getattr(select, '__module__', '')}.{getattr(select, '__qualname__', repr(select))}"
    code = getattr(select, "__code__", None)
    if code is not None:
        digest = hashlib.sha256(code.co_code + repr((code.co_consts, code.co_names)).encode())
        name += "#" + digest.hexdigest()[:12]
    return name


def _zeros(spec: PyTree, lead: tuple[int, ...] = ()) -> PyTree:
    return jax.tree_util.tree_map(lambda s: jnp.zeros(lead + s.shape, s.dtype), spec)


def _identity_finalize(acc: PyTree, num_steps: int) -> PyTree:
    return acc


def _memoized(factory):
    """Return the same Recorder object for the same arguments.

    The engine caches compiled kernels per (algorithm, recorder) object, so building
    ``record.last()`` twice must not force a recompilation. Arguments are hashed by value
    (sequences as tuples) and functions by identity: define ``select`` functions once (e.g. at
    module level) rather than as fresh lambdas in a loop.
    """
    cache: dict = {}

    @functools.wraps(factory)
    def build(*args, **kwargs):
        def freeze(x):
            if isinstance(x, (list, np.ndarray)) or type(x) is tuple:
                return tuple(np.asarray(x).ravel().tolist())
            return x

        key = (tuple(freeze(a) for a in args), tuple(sorted((k, freeze(v)) for k, v in kwargs.items())))
        try:
            hash(key)
        except TypeError:
            return factory(*args, **kwargs)
        if key not in cache:
            cache[key] = factory(*args, **kwargs)
        return cache[key]

    return build


@_memoized
def last(select: Select = None) -> Recorder:
    """Keep the outputs of the final step only."""

    def init(spec, num_steps):
        return _zeros(_select_spec(select, spec))

    def update(acc, outputs, t, num_steps):
        return _apply(select, outputs)

    return Recorder(init, update, _identity_finalize, f"last({_name(select)})")


@_memoized
def total(select: Select = None) -> Recorder:
    """Sum of the outputs over all steps (e.g. total gain). Sums in the outputs' dtype."""

    def init(spec, num_steps):
        return _zeros(_select_spec(select, spec))

    def update(acc, outputs, t, num_steps):
        return jax.tree_util.tree_map(jnp.add, acc, _apply(select, outputs))

    return Recorder(init, update, _identity_finalize, f"total({_name(select)})")


@_memoized
def mean(select: Select = None) -> Recorder:
    """Average of the outputs over all steps."""
    summed = total(select)

    def finalize(acc, num_steps):
        return jax.tree_util.tree_map(lambda x: x / num_steps, acc)

    return Recorder(summed.init, summed.update, finalize, f"mean({_name(select)})")


@_memoized
def every_step(select: Select = None) -> Recorder:
    """Stack the outputs of every step along a new leading time axis (O(T) memory)."""

    def init(spec, num_steps):
        return _zeros(_select_spec(select, spec), (num_steps,))

    def update(acc, outputs, t, num_steps):
        return jax.tree_util.tree_map(lambda a, x: a.at[t].set(x), acc, _apply(select, outputs))

    return Recorder(init, update, _identity_finalize, f"every_step({_name(select)})")


@_memoized
def at_steps(steps: Sequence[int], select: Select = None, cumulative: bool = False) -> Recorder:
    """Outputs (or, with ``cumulative=True``, running sums) after the given numbers of steps.

    Args:
      steps: strictly increasing step counts in [1, T]; entry i records the value after
        ``steps[i]`` steps (i.e. at 0-based step ``steps[i] - 1``).
      select: applied to the outputs first.
      cumulative: record the running sum of the selected outputs instead of their value.
    """
    steps_np = np.asarray(steps, dtype=np.int64)
    if steps_np.ndim != 1 or steps_np.size == 0 or np.any(np.diff(steps_np) <= 0):
        raise ValueError(f"steps must be a non-empty strictly increasing sequence, got {steps}")
    if steps_np[0] < 1:
        raise ValueError(f"steps must be >= 1 (counts of completed steps), got {steps_np[0]}")
    n = steps_np.size

    def init(spec, num_steps):
        if steps_np[-1] > num_steps:
            raise ValueError(f"steps must be <= num_steps={num_steps}, got {steps_np[-1]}")
        sel = _select_spec(select, spec)
        return (_zeros(sel), _zeros(sel, (n,)))

    def update(acc, outputs, t, num_steps):
        running, table = acc
        value = _apply(select, outputs)
        running = jax.tree_util.tree_map(jnp.add, running, value) if cumulative else value
        marks = jnp.asarray(steps_np - 1, jnp.int32)
        index = jnp.clip(jnp.searchsorted(marks, t), 0, n - 1)
        hit = marks[index] == t
        table = jax.tree_util.tree_map(
            lambda tab, x: tab.at[index].set(jnp.where(hit, x, tab[index])), table, running
        )
        return running, table

    def finalize(acc, num_steps):
        return acc[1]

    kind = "cumulative" if cumulative else "value"
    return Recorder(init, update, finalize, f"at_steps({steps_np.tolist()},{kind},{_name(select)})")


@_memoized
def combine(**recorders: Recorder) -> Recorder:
    """Run several recorders side by side; the record is a dict with the same keys."""
    names = sorted(recorders)

    def init(spec, num_steps):
        return {k: recorders[k].init(spec, num_steps) for k in names}

    def update(acc, outputs, t, num_steps):
        return {k: recorders[k].update(acc[k], outputs, t, num_steps) for k in names}

    def finalize(acc, num_steps):
        return {k: recorders[k].finalize(acc[k], num_steps) for k in names}

    spec = ",".join(f"{k}={recorders[k].spec}" for k in names)
    return Recorder(init, update, finalize, f"combine({spec})")


__all__ = ["Recorder", "at_steps", "combine", "every_step", "last", "mean", "total"]
