"""Parameter grids: pytrees whose leaves carry leading grid axes for ``simulate``.

``product_grid(params, mu=[...], alpha=[...])`` replaces the named fields of a ``NamedTuple``
(or frozen dataclass) of numeric parameters by an outer product: every leaf gets the leading
shape ``(len(mu), len(alpha))`` and the named fields vary along their own axis. Pass
``grid_ndim=2`` to :func:`ldpjax.engine.simulate`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from ldpjax.types import PyTree


def _fields(params: Any) -> tuple[str, ...]:
    if hasattr(params, "_fields"):
        return tuple(params._fields)
    if dataclasses.is_dataclass(params):
        return tuple(f.name for f in dataclasses.fields(params))
    if isinstance(params, dict):
        return tuple(params)
    raise TypeError("params must be a NamedTuple, dataclass or dict to build a grid")


def _replace(params: Any, **changes: Any) -> Any:
    if hasattr(params, "_replace"):
        return params._replace(**changes)
    if dataclasses.is_dataclass(params):
        return dataclasses.replace(params, **changes)
    return {**params, **changes}


def product_grid(params: PyTree, **axes: Any) -> PyTree:
    """Outer-product grid over the named fields; other fields are broadcast.

    Returns params whose every leaf has leading shape ``tuple(len(v) for v in axes.values())``
    (in the keyword order given).
    """
    names = _fields(params)
    for name in axes:
        if name not in names:
            raise ValueError(f"{name!r} is not a field of {type(params).__name__}: {names}")
    values = {k: jnp.asarray(v) for k, v in axes.items()}
    for k, val in values.items():
        if val.ndim < 1 or val.shape[0] == 0:
            raise ValueError(f"grid axis {k!r} needs a non-empty 1-d sequence of values")
    grid_shape = tuple(int(v.shape[0]) for v in values.values())
    d = len(grid_shape)
    changes = {}
    for i, (k, val) in enumerate(values.items()):
        shape = [1] * d
        shape[i] = grid_shape[i]
        tail = val.shape[1:]
        changes[k] = val.reshape(tuple(shape) + tail)
    out = {}
    for name in names:
        leaf_tree = changes.get(name)
        if leaf_tree is None:
            leaf_tree = params[name] if isinstance(params, dict) else getattr(params, name)
            out[name] = jax.tree_util.tree_map(
                lambda x: jnp.broadcast_to(jnp.asarray(x), grid_shape + jnp.shape(x)), leaf_tree
            )
        else:
            out[name] = jnp.broadcast_to(leaf_tree, grid_shape + leaf_tree.shape[d:])
    return _replace(params, **out)


def grid_shape_of(params: PyTree, grid_ndim: int) -> tuple[int, ...]:
    """The common leading ``grid_ndim`` axes of every leaf (ValueError if they disagree)."""
    leaves = jax.tree_util.tree_leaves(params)
    if grid_ndim == 0:
        return ()
    if not leaves:
        raise ValueError("grid_ndim > 0 needs params with array leaves")
    shapes = {tuple(jnp.shape(x)[:grid_ndim]) for x in leaves}
    if len(shapes) != 1 or any(len(s) != grid_ndim for s in shapes):
        raise ValueError(
            f"every params leaf must share the same {grid_ndim} leading grid axes; got {shapes}"
        )
    return shapes.pop()


__all__ = ["grid_shape_of", "product_grid"]
