"""Checks of :func:`ldpjax.engine.simulate`'s arguments at the Python boundary (before compiling).

Wrong types raise ``TypeError`` and out-of-range values ``ValueError``; both name the argument
(and, for pytrees, the leaf path such as ``params.mu``), so that a bad sweep fails here instead
of deep inside a JAX broadcasting or reduction error. :func:`validate_algorithm` runs the
algorithm's own ``validate`` hook on the concrete parameter grid and inputs and names the grid
index of the first offending point.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from ldpjax.engine.keys import MAX_SEED_INDEX
from ldpjax.types import PyTree

_NUMERIC_KINDS = "biuf"  # bool, int, uint, float


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (``TypeError`` for non-numbers, ``ValueError`` otherwise)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Number, np.ndarray)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, (bool, np.bool_)) or np.ndim(value) != 0:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        ok = float(value) == int(value)
    except (OverflowError, ValueError, TypeError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {allowed}, got {value}")
    return value



def leaf_name(name: str, path) -> str:
    """``params.mu`` / ``inputs[0]`` style name of a leaf."""
    if not path:
        return name
    parts = []
    for entry in path:
        if isinstance(entry, jax.tree_util.GetAttrKey):
            parts.append(f".{entry.name}")
        elif isinstance(entry, jax.tree_util.DictKey):
            parts.append(f"[{entry.key!r}]")
        elif isinstance(entry, jax.tree_util.SequenceKey):
            parts.append(f"[{entry.idx}]")
        else:
            parts.append(str(entry))
    return name + "".join(parts)


def check_numeric_tree(name: str, tree: PyTree, *, allow_empty: bool = False) -> None:
    """Every leaf numeric (bool/int/float arrays); no strings, objects, complex; not empty.

    A float16 / bfloat16 leaf raises the ``ValueError`` of :func:`check_precision_tree`
    (releases compute in float32 or float64 only), not a ``TypeError``.
    """
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        where = leaf_name(name, path)
        if isinstance(leaf, (str, bytes)):
            raise TypeError(f"{where} must be numeric, got the string {leaf!r}")
        if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            continue
        dtype = getattr(leaf, "dtype", None)
        if dtype is None:
            try:
                dtype = np.asarray(leaf).dtype
            except Exception as err:  # noqa: BLE001
                raise TypeError(f"{where} must be a numeric array, got {type(leaf).__name__}") from err
        dtype = np.dtype(dtype)
        if str(dtype) in _LOW_PRECISION:  # before the kind check: bfloat16 is no NumPy float
            raise _low_precision(where, dtype)
        if dtype.kind not in _NUMERIC_KINDS:
            kind = {"U": "strings", "S": "bytes", "O": "Python objects", "c": "complex numbers"}
            raise TypeError(
                f"{where} must hold bool, integer or float numbers, got "
                f"{kind.get(dtype.kind, 'dtype ' + str(dtype))}"
            )
        if not allow_empty and np.size(leaf) == 0:
            raise ValueError(f"{where} is empty (shape {np.shape(leaf)})")


_LOW_PRECISION = ("float16", "bfloat16")


def _low_precision(where: str, dtype) -> ValueError:
    return ValueError(
        f"{where} has dtype {np.dtype(dtype)}: ldpjax computes releases in float32 or float64 "
        f"only (low precision weakens the privacy claim); cast it with .astype(jnp.float32)"
    )


def check_precision_tree(name: str, tree: PyTree) -> None:
    """No float16 / bfloat16 leaf: releases compute in float32 or float64 only."""
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        dtype = getattr(leaf, "dtype", None)
        if dtype is not None and str(np.dtype(dtype)) in _LOW_PRECISION:
            raise _low_precision(leaf_name(name, path), dtype)


def has_no_noise_budget(params: PyTree) -> bool:
    """True when a concrete float leaf of ``params`` holds +inf (a no-privacy budget such as
    mu = inf or gamma = inf): the engine then runs inside
    :func:`ldpjax.mechanisms.no_privacy_permitted`."""
    for leaf in jax.tree_util.tree_leaves(params):
        if isinstance(leaf, jax.core.Tracer):
            return False
        if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            continue
        arr = np.asarray(leaf)
        if arr.dtype.kind == "f" and np.any(np.isposinf(arr)):
            return True
    return False


def grants_no_privacy(algorithm, params: PyTree) -> bool:
    """True when the concrete ``params`` hold a no-noise budget: a +inf leaf (mu = inf,
    gamma = inf), or a claim that grants no privacy (``algorithm.privacy_event(params)`` asked
    through the event protocol's no-noise view,
    :func:`ldpjax.accounting.protocol.grants_no_privacy`: r = 1, A&S at node_sd = 0, ...).

    Called after ``validate``: these points were checked. Traced params grant nothing and no
    event is built for them. An event that cannot be built for concrete params raises its own
    error (it is never read as "noise on").
    """
    if has_no_noise_budget(params):
        return True
    event_of = getattr(algorithm, "privacy_event", None)
    if event_of is None or any(
        isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(params)
    ):
        return False
    from ldpjax.accounting.protocol import grants_no_privacy as event_grants

    return event_grants(event_of(params))


def num_steps_of(num_steps: Any, inputs: PyTree) -> int:
    """The horizon: ``num_steps``, or the common time length of ``inputs``; checked."""
    lengths = {}
    for path, leaf in jax.tree_util.tree_leaves_with_path(inputs):
        shape = np.shape(leaf)
        if len(shape) == 0:
            raise ValueError(
                f"{leaf_name('inputs', path)} needs a leading time axis, got a scalar"
            )
        lengths[leaf_name("inputs", path)] = int(shape[0])
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"every inputs leaf needs the same leading time axis, got lengths {lengths}"
        )
    length = next(iter(lengths.values())) if lengths else None
    if length == 0:
        raise ValueError("inputs have an empty time axis (0 steps)")
    if num_steps is None:
        if length is None:
            raise ValueError("num_steps is required when there are no inputs")
        return length
    num_steps = check_int("num_steps", num_steps, 1)
    if length is not None and length < num_steps:
        raise ValueError(
            f"inputs have {length} time steps, fewer than num_steps={num_steps}"
        )
    return num_steps


def check_seeds(num_seeds: Any, seed_offset: Any) -> tuple[int, int]:
    num_seeds = check_int("num_seeds", num_seeds, 1, MAX_SEED_INDEX)
    seed_offset = check_int("seed_offset", seed_offset, 0, MAX_SEED_INDEX - 1)
    if seed_offset + num_seeds > MAX_SEED_INDEX:
        raise ValueError(
            f"seed_offset + num_seeds must be <= 2**32 (seed indices are folded into the key as "
            f"32-bit words; larger ones would wrap around and repeat seed "
            f"{(seed_offset + num_seeds) % MAX_SEED_INDEX - 1}'s draws), got seed_offset="
            f"{seed_offset}, num_seeds={num_seeds}"
        )
    return num_seeds, seed_offset


def check_grid_ndim(grid_ndim: Any, params: PyTree) -> int:
    grid_ndim = check_int("grid_ndim", grid_ndim, 0)
    for path, leaf in jax.tree_util.tree_leaves_with_path(params):
        if np.ndim(leaf) < grid_ndim:
            raise ValueError(
                f"grid_ndim={grid_ndim} but {leaf_name('params', path)} has only "
                f"{np.ndim(leaf)} dimension(s) (shape {np.shape(leaf)})"
            )
    return grid_ndim


def _unravel(index: int, grid_shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(index, grid_shape)) if grid_shape else ()


def validate_algorithm(algorithm, params: PyTree, inputs: PyTree, grid_shape, grid_ndim) -> None:
    """Run ``algorithm.validate(params, inputs)`` on the concrete grid; name the grid index.

    Without a ``validate`` hook, an algorithm that declares a ``privacy_event`` is checked
    through its event instead (:func:`event_validator`), so it still fails closed.

    The whole grid is validated at once; if that fails and the grid has several points, the
    points are validated one by one and the error names the first failing one (its index and
    the grid shape). Errors keep their type (``ValueError``/``TypeError``).
    """
    validate = getattr(algorithm, "validate", None)
    if validate is None:
        validate = event_validator(algorithm)
    if validate is None:
        return
    try:
        validate(params, inputs)
    except (ValueError, TypeError) as err:
        if not grid_shape or int(np.prod(grid_shape)) == 1:
            raise
        flat = jax.tree_util.tree_map(
            lambda x: np.asarray(x).reshape((-1,) + np.shape(x)[grid_ndim:]), params
        )
        for g in range(int(np.prod(grid_shape))):
            point = jax.tree_util.tree_map(lambda x, g=g: x[g], flat)
            try:
                validate(point, inputs)
            except (ValueError, TypeError) as point_err:
                index = _unravel(g, tuple(grid_shape))
                raise type(point_err)(
                    f"{point_err} (params grid point {index} of grid shape {tuple(grid_shape)})"
                ) from err
        raise type(err)(f"{err} (on the whole params grid of shape {tuple(grid_shape)})") from err


def event_validator(algorithm) -> Callable[[PyTree, PyTree], None] | None:
    """A ``validate(params, inputs)`` built from ``algorithm.privacy_event`` (None without one).

    Building the event of concrete params and checking it raises ``ValueError`` for a budget
    outside its domain (mu = -1, r = 2, ...), the checks every accountant makes before it
    computes. An event this library cannot read (a third party's) is left to its own code: it
    does not stop the run.
    """
    event_of = getattr(algorithm, "privacy_event", None)
    if event_of is None:
        return None
    from ldpjax.accounting.accountant import check_event as check

    def validate(params: PyTree, inputs: PyTree) -> None:
        del inputs
        try:
            check(event_of(params))
        except NotImplementedError:
            return

    return validate


__all__ = [
    "check_grid_ndim",
    "event_validator",
    "check_precision_tree",
    "grants_no_privacy",
    "has_no_noise_budget",
    "check_int",
    "check_numeric_tree",
    "check_seeds",
    "leaf_name",
    "num_steps_of",
    "validate_algorithm",
]
