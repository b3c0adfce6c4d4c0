"""Numeric parameters shared by every quantile algorithm, and their domain checks.

:class:`QuantileParams` is the params pytree of Local SGD, DP-SGD, DC and Single: every number a
user sweeps or differentiates (tau, the rates r_k, the weights p_k, the clients' locations and
scales, the learning-rate constants, the starting point, DP-SGD's delta) is an array leaf, so a
sweep over them is a ``vmap`` and ``jax.grad`` reaches them. Shapes (K, t_T, the schedule) are
static configuration of each algorithm.

Two layers of checks (the fail-closed policy of ``ldpjax.mechanisms``):

* :func:`validate_params` — for *concrete* params (one point or a whole stacked grid): raises
  ``ValueError`` naming the leaf and the allowed range. It is every quantile algorithm's
  ``Algorithm.validate``, which ``ldpjax.engine.simulate`` calls before compiling.
* :func:`params_valid` — for *traced* params: a boolean mask; the algorithms start from a NaN
  iterate where it is false, so the estimate is NaN (never a noiseless or biased number). The
  mechanisms fail closed on their own as well (a fair coin for an invalid r, a NaN release for
  an invalid Gaussian budget).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.quantile.clients import Clients, check_weights
from ldpjax.quantile.schedules import DEFAULT_LR, check_learning_rate
from ldpjax.types import Array, ArrayLike


class QuantileParams(NamedTuple):
    """Numeric parameters shared by every quantile algorithm (array leaves: vmap/grad-able).

    Attributes:
      tau: quantile level in (0, 1).
      r: (K,) truthful-response rates in (0, 1] (client k is eps_k-LDP,
        eps_k = log((1 + r_k) / (1 - r_k)); r_k = 1 means no privacy for client k).
      weights: (K,) client weights p_k (non-negative, sum 1).
      clients: the client distributions (:class:`~ldpjax.quantile.clients.Clients`).
      lr_scale, lr_power, lr_offset: learning rate lr_m = lr_scale / (m^lr_power + lr_offset).
      init: starting iterate q_0 (shared by all clients).
      delta: the delta of the (eps_k, delta) calibration of the DP-SGD baseline's Gaussian
        mechanism (unused by the randomized-response algorithms).
    """

    tau: Array
    r: Array
    weights: Array
    clients: Clients
    lr_scale: Array
    lr_power: Array
    lr_offset: Array
    init: Array
    delta: Array


def quantile_params(
    tau: ArrayLike,
    r: ArrayLike,
    clients: Clients,
    weights: ArrayLike | None = None,
    *,
    lr_scale: ArrayLike = DEFAULT_LR.scale,
    lr_power: ArrayLike = DEFAULT_LR.power,
    lr_offset: ArrayLike = DEFAULT_LR.offset,
    init: ArrayLike = 0.0,
    delta: ArrayLike = 1e-5,
) -> QuantileParams:
    """Validated :class:`QuantileParams`.

    Args:
      tau: quantile level in (0, 1).
      r: truthful-response rate(s) in (0, 1], scalar (shared) or one per client.
      clients: K >= 1 client distributions.
      weights: p_k (default 1/K); must be non-negative and sum to 1.
      lr_scale, lr_power, lr_offset: learning-rate constants (c0 > 0, a in (0.5, 1], b >= 0).
      init: starting iterate (finite).
      delta: DP-SGD calibration delta in (0, 1).

    Raises:
      ValueError: naming the offending argument.

    Example:
      >>> import ldpjax.quantile as Q
      >>> params = Q.quantile_params(0.5, 0.9, Q.make_clients("normal", loc=[0.0, 1.0]))
      >>> params.r.shape
      (2,)
    """
    if not isinstance(clients, Clients):
        raise TypeError(f"clients must be a Clients object (make_clients / record_clients); got {clients!r}")
    k = clients.num_clients
    if k < 1:
        raise ValueError(f"num_clients (K) must be an integer >= 1; got {k}")
    v.check_range("tau", tau, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    if v.is_concrete(r) and np.ndim(r) > 0 and np.shape(r)[-1] not in (1, k):
        raise ValueError(f"r must be a scalar or have one entry per client (K={k}); got shape {np.shape(r)}")
    weights = check_weights(weights, k)
    check_learning_rate(lr_scale, lr_power, lr_offset)
    v.check_range("init", init, -np.inf, np.inf, low_open=True, high_open=True)
    v.check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    dtype = jnp.result_type(float)
    dom.check_rate("r", r, dtype)  # an r < 1 that rounds to 1 would mean no privacy
    r = jnp.asarray(r, dtype)
    r = jnp.broadcast_to(r, r.shape[:-1] + (k,)) if r.ndim else jnp.full((k,), r, dtype)
    return QuantileParams(
        tau=jnp.asarray(tau, dtype),
        r=r,
        weights=weights,
        clients=clients,
        lr_scale=jnp.asarray(lr_scale, dtype),
        lr_power=jnp.asarray(lr_power, dtype),
        lr_offset=jnp.asarray(lr_offset, dtype),
        init=jnp.asarray(init, dtype),
        delta=jnp.asarray(delta, dtype),
    )


def validate_params(params: QuantileParams, inputs: Any = None) -> None:
    """The quantile algorithms' ``Algorithm.validate``: concrete params, one point or a grid.

    Raises ``ValueError`` naming the leaf (``tau``, ``r``, ``weights``, ``lr_scale``,
    ``lr_power``, ``lr_offset``, ``init``, ``delta``, ``clients.loc``, ``clients.scale``) and its
    allowed range; ``TypeError`` when ``params`` is not a :class:`QuantileParams` or ``inputs``
    is given (the quantile algorithms draw their own data). Traced leaves are skipped (they fail
    closed at run time, see :func:`params_valid`).
    """
    if not isinstance(params, QuantileParams):
        raise TypeError(f"params must be QuantileParams (see quantile_params); got {type(params).__name__}")
    if inputs is not None:
        raise TypeError("inputs must be None: the quantile algorithms draw their own data")
    if not isinstance(params.clients, Clients):
        raise TypeError(f"params.clients must be a Clients object; got {type(params.clients).__name__}")
    k = params.clients.num_clients
    v.check_range("tau", params.tau, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("r", params.r, 0.0, 1.0, low_open=True)
    for name in ("r", "weights"):
        leaf = getattr(params, name)
        if np.shape(leaf)[-1:] != (k,):
            raise ValueError(f"{name} must have one entry per client (K={k}) on its last axis; got shape {np.shape(leaf)}")
    v.check_sums_to_one("weights", params.weights, atol=1e-4)
    check_learning_rate(params.lr_scale, params.lr_power, params.lr_offset)
    v.check_range("init", params.init, -np.inf, np.inf, low_open=True, high_open=True)
    v.check_range("delta", params.delta, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("clients.loc", params.clients.loc, -np.inf, np.inf, low_open=True, high_open=True)
    v.check_range("clients.scale", params.clients.scale, 0.0, np.inf, low_open=True, high_open=True)


def params_valid(params: QuantileParams) -> Array:
    """Traced-value domain check of one grid point (the NaN policy under ``jit``/``vmap``)."""
    ok = (params.tau > 0) & (params.tau < 1)
    ok &= jnp.all((params.r > 0) & (params.r <= 1))
    ok &= jnp.all(params.weights >= 0) & (jnp.abs(jnp.sum(params.weights) - 1.0) < 1e-4)
    ok &= (params.lr_scale > 0) & (params.lr_scale < jnp.inf)
    ok &= (params.lr_power > 0.5) & (params.lr_power <= 1)
    ok &= (params.lr_offset >= 0) & (params.lr_offset < jnp.inf)
    ok &= jnp.isfinite(params.init)
    ok &= (params.delta > 0) & (params.delta < 1)
    ok &= jnp.all(jnp.isfinite(params.clients.loc))
    ok &= jnp.all((params.clients.scale > 0) & (params.clients.scale < jnp.inf))
    return ok


__all__ = ["QuantileParams", "params_valid", "quantile_params", "validate_params"]
