"""Recorders: reduce per-step outputs inside the scan so memory is O(state), not O(T x state).

A :class:`Recorder` is a small ``NamedTuple`` of pure functions (like an optax transformation):

* ``init(outputs_spec, num_steps) -> acc`` from the abstract (``ShapeDtypeStruct``) step outputs;
* ``update(acc, outputs, t, num_steps) -> acc`` at step t (0-based, global);
* ``finalize(acc, num_steps) -> record`` once, at the end of the run;
* ``spec``: a string that identifies the recorder (used to fingerprint saved chunks);
* ``key``: a hashable value the recorder is compared by (``None``: by its functions).

Every recorder takes ``select``, applied to the step outputs first, so only what is needed is
kept. Pass a field name -- ``record.total("gain")``, ``record.last("position")``, a dotted path
``"stats.mean"`` -- or :func:`field` (``record.field("batch_start", dtype="int32")``), or
:func:`fields` for several; any callable works too.

Recorders compare **by value**: ``record.total("gain") == record.total("gain")``, and so do
recorders built from plain functions with the same code, the same captured values and the
same referenced globals (``record.total(lambda o: o.gain)`` built twice in a loop). The engine
caches compiled kernels per (algorithm, recorder, shapes), so a recorder written anew at every
call does not recompile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine.digest import stable
from ldpjax.types import PyTree

Select = Callable[[PyTree], PyTree] | str | None


class _Identity:
    """Hash/compare an object by identity (keeps it alive while the key lives)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _value_key(x: Any, depth: int = 0) -> Any:
    if depth > 8:
        return _Identity(x)
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return (type(x).__name__, x)
    if type(x) is tuple:
        return ("tuple",) + tuple(_value_key(v, depth + 1) for v in x)
    if callable(x) and (hasattr(x, "__code__") or hasattr(x, "func")):
        return select_key(x, depth + 1)
    try:
        hash(x)
    except TypeError:
        return _Identity(x)
    return ("obj", type(x), x) if not isinstance(x, type) else ("type", _Identity(x))


def _global_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def select_key(select: Any, depth: int = 0) -> Any:
    """A hashable value identifying what ``select`` computes, within this process.

    ``None`` and :class:`Field` compare by value. A Python function is keyed by its code object
    (equal for the same source, however often the ``lambda`` is re-created), the values it
    captures (by value when hashable, else by identity), its defaults, and the identity of
    every global it can read -- the same information ``jax.jit`` relies on. Other callables are
    keyed by value when hashable, else by identity.
    """
    if select is None or isinstance(select, Field):
        return select
    if isinstance(select, str):
        return field(select)
    func = getattr(select, "func", None)
    if func is not None and hasattr(select, "args") and hasattr(select, "keywords"):
        return (
            "partial",
            select_key(func, depth + 1),
            _value_key(tuple(select.args), depth + 1),
            tuple(sorted((k, _value_key(v, depth + 1)) for k, v in select.keywords.items())),
        )
    code = getattr(select, "__code__", None)
    if code is not None:
        cells = []
        for cell in getattr(select, "__closure__", None) or ():
            try:
                cells.append(_value_key(cell.cell_contents, depth + 1))
            except ValueError:  # empty cell
                cells.append(None)
        glob = getattr(select, "__globals__", {})
        refs = tuple(
            (name, _Identity(glob[name])) for name in sorted(_global_names(code)) if name in glob
        )
        defaults = _value_key(tuple(getattr(select, "__defaults__", None) or ()), depth + 1)
        kwdefaults = tuple(
            sorted((k, _value_key(v, depth + 1)) for k, v in (select.__kwdefaults__ or {}).items())
        )
        return ("function", code, tuple(cells), refs, defaults, kwdefaults)
    return _value_key(select, depth + 1) if depth < 8 else _Identity(select)


@dataclasses.dataclass(frozen=True)
class Field:
    """Select ``outputs.<path>`` (attribute or mapping key at each level), optionally cast.

    Hashable and compared by value, so recorders built from it hit the kernel cache.
    """

    path: tuple[str, ...]
    dtype: str | None = None

    def __call__(self, outputs: PyTree) -> PyTree:
        x = outputs
        for name in self.path:
            x = x[name] if isinstance(x, Mapping) else getattr(x, name)
        if self.dtype is not None:
            x = jax.tree_util.tree_map(lambda v: jnp.asarray(v).astype(self.dtype), x)
        return x


def field(name: str, dtype: Any = None) -> Field:
    """A value-comparable select: ``field("gain")``; dotted paths ``"a.b"``; optional ``dtype``."""
    if not isinstance(name, str) or not name or any(not part for part in name.split(".")):
        raise ValueError(f"field name must be a non-empty (dotted) string, got {name!r}")
    return Field(tuple(name.split(".")), None if dtype is None else np.dtype(dtype).name)


@dataclasses.dataclass(frozen=True)
class Fields:
    """Select several fields into a dict: ``fields("regret", "clicks")``."""

    items: tuple[tuple[str, Field], ...]

    def __call__(self, outputs: PyTree) -> dict[str, PyTree]:
        return {name: sel(outputs) for name, sel in self.items}


def fields(*names: str, **named: str | Field) -> Fields:
    """Several fields as a dict; positional names keep their name, keywords rename."""
    items = [(n, field(n)) for n in names]
    items += [(k, v if isinstance(v, Field) else field(v)) for k, v in named.items()]
    if not items:
        raise ValueError("fields() needs at least one field name")
    return Fields(tuple(items))


def _as_select(select: Any) -> Any:
    if select is None or callable(select):
        return select
    if isinstance(select, str):
        return field(select)
    raise TypeError(f"select must be None, a field name or a callable, got {select!r}")


class Recorder(NamedTuple):
    """A recorder: ``init``, ``update``, ``finalize``, a ``spec`` string and a value ``key``.

    Two recorders with the same non-None ``key`` are equal (and hash equally), whatever their
    function objects; with ``key=None`` they are equal only if they hold the same functions.
    """

    init: Callable[[PyTree, int], PyTree]
    update: Callable[[PyTree, PyTree, Any, int], PyTree]
    finalize: Callable[[PyTree, int], PyTree]
    spec: str
    key: Any = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Recorder):
            return NotImplemented
        if self.key is not None and other.key is not None:
            return bool(self.key == other.key)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        if self.key is not None:
            return hash(("Recorder", self.key))
        return tuple.__hash__(self)


def _apply(select: Select, outputs: PyTree) -> PyTree:
    return outputs if select is None else select(outputs)


def _select_spec(select: Select, spec: PyTree) -> PyTree:
    return jax.eval_shape(lambda o: _apply(select, o), spec)


def _name(select: Select) -> str:
    """A process-independent description of ``select`` (code and captured values)."""
    if select is None:
        return "all"
    if isinstance(select, Field):
        return ".".join(select.path) + (f":{select.dtype}" if select.dtype else "")
    return stable(select)


def _zeros(spec: PyTree, lead: tuple[int, ...] = ()) -> PyTree:
    return jax.tree_util.tree_map(lambda s: jnp.zeros(lead + s.shape, s.dtype), spec)


def _identity_finalize(acc: PyTree, num_steps: int) -> PyTree:
    return acc


def last(select: Select = None) -> Recorder:
    """Keep the outputs of the final step only (``record.last("position")``)."""
    select = _as_select(select)

    def init(spec, num_steps):
        return _zeros(_select_spec(select, spec))

    def update(acc, outputs, t, num_steps):
        return _apply(select, outputs)

    return Recorder(
        init, update, _identity_finalize, f"last({_name(select)})", ("last", select_key(select))
    )


def total(select: Select = None) -> Recorder:
    """Sum of the outputs over all steps (``record.total("gain")``), in the outputs' dtype."""
    select = _as_select(select)

    def init(spec, num_steps):
        return _zeros(_select_spec(select, spec))

    def update(acc, outputs, t, num_steps):
        return jax.tree_util.tree_map(jnp.add, acc, _apply(select, outputs))

    return Recorder(
        init, update, _identity_finalize, f"total({_name(select)})", ("total", select_key(select))
    )


def mean(select: Select = None) -> Recorder:
    """Average of the outputs over all steps (``record.mean("error")``)."""
    select = _as_select(select)
    summed = total(select)

    def finalize(acc, num_steps):
        return jax.tree_util.tree_map(lambda x: x / num_steps, acc)

    return Recorder(
        summed.init, summed.update, finalize, f"mean({_name(select)})", ("mean", select_key(select))
    )


def every_step(select: Select = None) -> Recorder:
    """Stack the outputs of every step along a new leading time axis (O(T) memory)."""
    select = _as_select(select)

    def init(spec, num_steps):
        return _zeros(_select_spec(select, spec), (num_steps,))

    def update(acc, outputs, t, num_steps):
        return jax.tree_util.tree_map(lambda a, x: a.at[t].set(x), acc, _apply(select, outputs))

    return Recorder(
        init, update, _identity_finalize, f"every_step({_name(select)})", ("every_step", select_key(select))
    )


def at_steps(steps: Sequence[int], select: Select = None, cumulative: bool = False) -> Recorder:
    """Outputs (or, with ``cumulative=True``, running sums) after the given numbers of steps.

    Args:
      steps: strictly increasing step counts in [1, T]; entry i records the value after
        ``steps[i]`` steps (i.e. at 0-based step ``steps[i] - 1``).
      select: applied to the outputs first.
      cumulative: record the running sum of the selected outputs instead of their value.
    """
    select = _as_select(select)
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
    return Recorder(
        init,
        update,
        finalize,
        f"at_steps({steps_np.tolist()},{kind},{_name(select)})",
        ("at_steps", tuple(steps_np.tolist()), bool(cumulative), select_key(select)),
    )


def combine(**recorders: Recorder) -> Recorder:
    """Run several recorders side by side; the record is a dict with the same keys."""
    for name, rec in recorders.items():
        if not isinstance(rec, Recorder):
            raise TypeError(f"combine({name}=...) needs a Recorder, got {type(rec).__name__}")
    names = sorted(recorders)

    def init(spec, num_steps):
        return {k: recorders[k].init(spec, num_steps) for k in names}

    def update(acc, outputs, t, num_steps):
        return {k: recorders[k].update(acc[k], outputs, t, num_steps) for k in names}

    def finalize(acc, num_steps):
        return {k: recorders[k].finalize(acc[k], num_steps) for k in names}

    spec = ",".join(f"{k}={recorders[k].spec}" for k in names)
    key = tuple((k, recorders[k]) for k in names)  # Recorders compare by value themselves
    return Recorder(init, update, finalize, f"combine({spec})", ("combine", key))


__all__ = [
    "Field",
    "Fields",
    "Recorder",
    "at_steps",
    "combine",
    "every_step",
    "field",
    "fields",
    "last",
    "mean",
    "select_key",
    "total",
]
