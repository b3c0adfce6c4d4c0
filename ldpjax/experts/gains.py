"""Gain matrices for prediction with expert advice.

As in "Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026).

Gains live in [0, 1]^n: the l2 sensitivity bound sqrt(n) of a gain vector, and with it every
privacy claim, rests on that range, so anything else is rejected.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike


def validate_gains(gains: ArrayLike, name: str = "gains") -> Array:
    """Check a (T, n) gain matrix and return it as a floating JAX array.

    Raises ``ValueError`` (naming ``name``) unless the array is 2-d with T >= 1 rounds and
    n >= 2 experts and every entry is a finite number in [0, 1]. Gains outside [0, 1] would
    void the sqrt(n) sensitivity bound and hence the mu-GLDP guarantee. Traced arrays (inside
    ``jit``) are returned unchecked.

    Example:
      >>> validate_gains([[0.0, 1.0], [0.5, 0.5]]).shape
      (2, 2)
    """
    if v.is_concrete(gains):
        arr = np.asarray(gains)
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-d array of shape (T rounds, n experts), got shape {arr.shape}"
            )
        if arr.shape[0] < 1 or arr.shape[1] < 2:
            raise ValueError(
                f"{name} needs T >= 1 rounds and n >= 2 experts, got shape {arr.shape}"
            )
        v.check_range(name, arr, 0.0, 1.0)
    gains = jnp.asarray(gains)
    if not jnp.issubdtype(gains.dtype, jnp.floating):
        gains = gains.astype(jnp.result_type(float))
    return gains
