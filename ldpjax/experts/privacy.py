"""The local randomizer shared by every expert algorithm: the Gaussian mechanism on a gain vector.

Each round the data holder releases g~_t = g_t + z_t with z_t ~ N(0, eta^2 I_n), eta = sensitivity /
mu. The l2 sensitivity of g_t in [0, 1]^n is sqrt(n) (the default), so the release is mu-GDP
("Prediction with Expert Advice under Local Differential Privacy", ICLR 2026, Sec. 3). Everything an
algorithm does afterwards reads only g~ and is post-processing, so the whole run is mu-GLDP *per
record*, where a record is one round's gain vector of the data holder.

This module draws no noise itself: :func:`privatize_gains` is a thin wrapper around
:func:`ldpjax.mechanisms.gaussian_mechanism` with ``domain=(0, 1)`` (the domain the sqrt(n)
sensitivity assumes). Fail closed: a concrete gain outside [0, 1], a concrete mu outside
(0, inf] or a sensitivity outside (0, inf) raises ``ValueError`` naming the argument; traced
ones give a NaN release. ``granularity=2**-k`` selects the float-safe granular release (exact
discrete Gaussian on the grid 2^-k Z): **use it to release real data**; the default float path is
for simulation only (its low-order bits leak the input, Mironov 2012).

``mu = inf`` (written explicitly) releases the clean gains. RW-FTPL and RW-AdaBatch then add
their *own* random walk of scale sqrt(2) (:data:`NONPRIVATE_ETA`, the utility-optimal scale of
(eta + 2/eta)): an algorithmic perturbation, not privacy noise; :func:`noise_scale` is the
scale of their per-round increment.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import gaussian_mechanism, gaussian_noise_scale
from ldpjax.types import Array, ArrayLike, PRNGKey

#: RW-FTPL's random-walk scale without a privacy requirement (mu = inf).
NONPRIVATE_ETA = math.sqrt(2.0)
#: The domain of one gain: the sqrt(n) sensitivity assumes gains in [0, 1].
GAIN_DOMAIN = (0.0, 1.0)


def default_sensitivity(num_experts: int) -> float:
    """sqrt(n): the l2 sensitivity of a gain vector in [0, 1]^n (one whole round changes).

    Example:
      >>> default_sensitivity(4)
      2.0
    """
    return math.sqrt(num_experts)


def resolve_sensitivity(sensitivity: ArrayLike | None, num_experts: int, dtype=None) -> Array:
    """The sensitivity leaf of an algorithm's params, or sqrt(n) when it is ``None``.

    Example:
      >>> float(resolve_sensitivity(None, 9)), float(resolve_sensitivity(1.5, 9))
      (3.0, 1.5)
    """
    dtype = dtype or jnp.result_type(float)
    if sensitivity is None:
        return jnp.asarray(default_sensitivity(num_experts), dtype)
    return jnp.asarray(sensitivity, dtype)


def noise_scale(mu: ArrayLike, n: int, sensitivity: ArrayLike | None = None) -> Array:
    """Scale of RW-FTPL's per-round increment: sensitivity / mu; sqrt(2) at an explicit mu = inf.

    Args:
      mu: GDP parameter per round, in (0, inf].
      n: number of experts (static int >= 2).
      sensitivity: l2 sensitivity of one gain vector, in (0, inf) (default sqrt(n)).

    Returns:
      eta; NaN (value and gradient) under ``jit`` where mu is NaN, <= 0 or -inf. A formula
      for the regret bounds, not a release: a traced mu = inf gives sqrt 2 here.

    Example:
      >>> float(noise_scale(2.0, 4)), round(float(noise_scale(float("inf"), 4)), 4)
      (1.0, 1.4142)
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_integer("n", n, 2)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    # A formula for the bounds, not a release: mu = inf (traced or not) is the non-private
    # walk, whose scale is sqrt 2; releases take their sigma from gaussian_noise_scale.
    sens = resolve_sensitivity(sensitivity, n, jnp.result_type(mu, float))
    mu = jnp.asarray(mu, sens.dtype)
    finite = jnp.isfinite(mu) & (mu > 0)
    eta = jnp.where(finite, sens / jnp.where(finite, mu, 1.0), NONPRIVATE_ETA)
    valid = (mu > 0) & (sens > 0) & jnp.isfinite(sens)
    return v.valid_or_nan(valid, eta.astype(sens.dtype), mu, sens)


def walk_scale(mu: ArrayLike, dtype=None) -> Array:
    """sqrt(2) where mu is exactly +inf, else 0: RW-FTPL's non-private random walk.

    Never a substitute for privacy noise: a NaN or invalid mu gives 0 here, and the release
    itself is NaN (fail closed).

    Example:
      >>> [round(float(walk_scale(m)), 4) for m in (float('inf'), 1.0, float('nan'))]
      [1.4142, 0.0, 0.0]
    """
    mu = jnp.asarray(mu, dtype or jnp.result_type(mu, float))
    return jnp.where(mu == jnp.inf, NONPRIVATE_ETA, 0.0).astype(mu.dtype)


def check_gain_vector(name: str, gains: ArrayLike) -> None:
    """Concrete ``gains`` must be a non-empty numeric 1-d vector (one round) in [0, 1].

    Example:
      >>> check_gain_vector('gains', [0.0, 0.5, 1.0])  # passes silently
    """
    if isinstance(gains, (str, bytes)):
        raise TypeError(f"{name} must be a numeric gain vector, got a string {gains!r}")
    if gains is None:
        raise TypeError(f"{name} must be a numeric gain vector, got None")
    shape = gains.shape if hasattr(gains, "shape") else np.shape(gains)
    if len(shape) != 1:
        raise ValueError(f"{name} must be one round's gain vector of shape (n,), got shape {shape}")
    if v.is_concrete(gains):
        arr = np.asarray(gains)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be a numeric gain vector, got dtype {arr.dtype}")
        if arr.size == 0:
            raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
        v.check_range(name, arr, *GAIN_DOMAIN)


def privatize_gains(
    key: PRNGKey,
    gains: ArrayLike,
    mu: ArrayLike,
    sensitivity: ArrayLike | None = None,
    *,
    granularity: float | None = None,
) -> Array:
    """The one release per round: ``gaussian_mechanism(key, gains, sensitivity, mu, domain=(0, 1))``.

    Args:
      key: PRNG key.
      gains: one round's gain vector, shape (n,), every entry in [0, 1].
      mu: GDP parameter of the release, in (0, inf] (inf: no noise, only when written so).
      sensitivity: l2 sensitivity in (0, inf); default sqrt(n).
      granularity: None (float path, simulation) or a power of two (granular path, real data).

    Returns:
      g~ = g + N(0, (sensitivity / mu)^2 I) (float path), shape (n,); NaN where a traced
      argument is out of domain.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> privatize_gains(jax.random.key(0), jnp.array([0.2, 0.9]), 1.0).shape
      (2,)
      >>> privatize_gains(jax.random.key(0), 5 * jnp.ones(3), 1.0)
      Traceback (most recent call last):
      ...
      ValueError: gains must be in [0, 1]; got [5, 5, 5] (first offending entries of an array of shape (3,))
    """
    check_gain_vector("gains", gains)
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    dom.check_power_of_two("granularity", granularity)
    gains = jnp.asarray(gains)
    if not jnp.issubdtype(gains.dtype, jnp.floating):
        gains = gains.astype(jnp.result_type(float))
    sens = resolve_sensitivity(sensitivity, gains.shape[-1], gains.dtype)
    return gaussian_mechanism(
        key, gains, sens, mu, domain=GAIN_DOMAIN, granularity=granularity
    )


def release_sd(
    mu: ArrayLike, sensitivity: ArrayLike, num_experts: int, granularity: float | None = None
) -> Array:
    """The sd of the privacy noise of :func:`privatize_gains` (sensitivity / mu; on the granular
    path the rounded sensitivity of :func:`ldpjax.mechanisms.rounded_sensitivity`).

    Example:
      >>> float(release_sd(2.0, 1.0, 3))
      0.5
    """
    if granularity is not None:
        from ldpjax.mechanisms import rounded_sensitivity

        sensitivity = rounded_sensitivity(sensitivity, granularity, num_experts, GAIN_DOMAIN)
    return gaussian_noise_scale(sensitivity, mu)


def gain_event(
    mu: ArrayLike, sensitivity: ArrayLike, num_experts: int, granularity: float | None = None
):
    """The per-record claim of one gain release: ``GaussianEvent(mu)`` (float path) or the
    :class:`~ldpjax.accounting.DiscreteGaussianEvent` of the granular path.

    Example:
      >>> gain_event(1.0, 2.0, 4)
      GaussianEvent(mu=Array(1., dtype=float32))
    """
    from ldpjax.accounting import GaussianEvent
    from ldpjax.mechanisms import granular_claim

    if granularity is None:
        return GaussianEvent(jnp.asarray(mu, jnp.result_type(mu, float)))
    return granular_claim(sensitivity, mu, granularity, num_experts, GAIN_DOMAIN)


def broadcast_leaves(dtype=None, **named: ArrayLike) -> list[Array]:
    """Broadcast named numeric leaves to one shape, or raise ``ValueError`` naming them.

    Example:
      >>> [x.shape for x in broadcast_leaves(mu=[1.0, 2.0], alpha=0.1)]
      [(2,), (2,)]
    """
    dtype = dtype or jnp.result_type(float)
    arrays = {k: jnp.asarray(x, dtype) for k, x in named.items()}
    try:
        shape = jnp.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in arrays.items())
        raise ValueError(
            f"{', '.join(arrays)} must broadcast to one shape; got shapes {shapes}"
        ) from None
    return [jnp.broadcast_to(a, shape) for a in arrays.values()]


def check_gain_inputs(inputs, num_experts: int, name: str = "inputs") -> None:
    """``validate`` helper: a concrete (T, n) gains matrix with n = num_experts, in [0, 1].

    Example:
      >>> check_gain_inputs([[0.1, 0.9]], 3)
      Traceback (most recent call last):
      ...
      ValueError: inputs must have shape (T rounds, 3 experts), got shape (1, 2)
    """
    if inputs is None:
        raise ValueError(f"{name} must be the (T, {num_experts}) gains matrix, got None")
    if isinstance(inputs, (str, bytes)):
        raise TypeError(f"{name} must be a numeric (T, n) gains matrix, got a string")
    if not v.is_concrete(inputs):
        return
    arr = np.asarray(inputs)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a numeric (T, n) gains matrix, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != num_experts:
        raise ValueError(
            f"{name} must have shape (T rounds, {num_experts} experts), got shape {arr.shape}"
        )
    if arr.shape[0] < 1:
        raise ValueError(f"{name} must have at least one round, got shape {arr.shape}")
    v.check_range(name, arr, *GAIN_DOMAIN)


def check_budget_params(params, num_experts: int) -> None:
    """``validate`` helper: the ``mu`` and ``sensitivity`` leaves of a (stacked) params grid.

    Example:
      >>> from ldpjax.experts.rw_ftpl import ftpl_params
      >>> check_budget_params(ftpl_params([0.5, float('inf')]), 3)  # passes silently
    """
    v.check_range("mu", params.mu, 0.0, jnp.inf, low_open=True)
    sens = getattr(params, "sensitivity", None)
    v.check_range("sensitivity", sens, 0.0, jnp.inf, low_open=True, high_open=True)


__all__ = [
    "GAIN_DOMAIN",
    "NONPRIVATE_ETA",
    "check_budget_params",
    "check_gain_inputs",
    "broadcast_leaves",
    "check_gain_vector",
    "default_sensitivity",
    "gain_event",
    "noise_scale",
    "privatize_gains",
    "release_sd",
    "resolve_sensitivity",
    "walk_scale",
]
