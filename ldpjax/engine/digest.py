"""Process-independent descriptions and digests of configurations, callables and arrays.

Pure functions, no files: they name recorders (a recorder's ``spec``) and describe what a
:func:`~ldpjax.engine.simulate` call's records depend on (the description handed to a chunk
runner, see :mod:`ldpjax.engine.runner`, which may fingerprint it to resume a sweep or to
check that several processes run the same one). Nothing here depends on memory addresses, so
the same configuration gets the same digest in every process.

Example:
  >>> import numpy as np
  >>> stable({"b": 1, "a": (2.5, None)})
  "{'a':(2.5,None),'b':1}"
  >>> tree_digest(np.arange(3)) == tree_digest(np.arange(3)), len(fingerprint({"a": 1}))
  (True, 64)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from typing import Any

import jax
import numpy as np

from ldpjax.types import PyTree


def code_digest(code) -> str:
    """Digest of a code object (bytecode, names, constants; nested code objects recursively)."""
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            parts.append(code_digest(const).encode())
        else:
            parts.append(repr(const).encode())
    return hashlib.sha256(b"|".join(parts)).hexdigest()[:16]


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
        return True
    except ValueError:
        return False


def stable(obj: Any, depth: int = 0) -> str:
    """A process-independent description of configs and callables (no memory addresses).

    Functions are described by module, qualified name, code digest and the description of
    their closure cells and defaults, so two lambdas with the same code but different captured
    values differ.
    """
    if depth > 6:
        return type(obj).__qualname__
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return repr(obj)
    if isinstance(obj, (np.ndarray, jax.Array, np.generic)):
        if isinstance(obj, jax.Array) and jax.dtypes.issubdtype(obj.dtype, jax.dtypes.prng_key):
            obj = jax.random.key_data(obj)
        arr = np.asarray(obj)
        return f"array{arr.shape}{arr.dtype}:{hashlib.sha256(arr.tobytes()).hexdigest()[:16]}"
    if isinstance(obj, functools.partial):
        return (
            f"partial({stable(obj.func, depth + 1)},{stable(obj.args, depth + 1)},"
            f"{stable(obj.keywords, depth + 1)})"
        )
    if hasattr(obj, "_fields") and isinstance(obj, tuple):
        inner = ",".join(f"{k}={stable(getattr(obj, k), depth + 1)}" for k in obj._fields)
        return f"{type(obj).__qualname__}({inner})"
    if isinstance(obj, (tuple, list)):
        return "(" + ",".join(stable(x, depth + 1) for x in obj) + ")"
    if isinstance(obj, dict):
        return "{" + ",".join(f"{k!r}:{stable(obj[k], depth + 1)}" for k in sorted(obj)) + "}"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        inner = ",".join(
            f"{f.name}={stable(getattr(obj, f.name), depth + 1)}" for f in dataclasses.fields(obj)
        )
        return f"{type(obj).__qualname__}({inner})"
    code = getattr(obj, "__code__", None)
    if code is not None:
        cells = getattr(obj, "__closure__", None) or ()
        closure = ",".join(stable(c.cell_contents, depth + 1) for c in cells if _filled(c))
        defaults = stable(getattr(obj, "__defaults__", None), depth + 1)
        return f"{obj.__module__}.{obj.__qualname__}#{code_digest(code)}[{closure}]{defaults}"
    if callable(obj):
        return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
    return type(obj).__qualname__


def tree_digest(tree: PyTree) -> str:
    """SHA-256 of a pytree's structure, shapes, dtypes and bytes (typed keys via key data)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    h = hashlib.sha256(str(treedef).encode())
    for leaf in leaves:
        if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        arr = np.asarray(leaf)
        h.update(f"{arr.shape}{arr.dtype}".encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def fingerprint(description: dict[str, Any]) -> str:
    """SHA-256 of a description dict (keys sorted)."""
    return hashlib.sha256(repr(sorted(description.items())).encode()).hexdigest()


__all__ = ["code_digest", "fingerprint", "stable", "tree_digest"]
