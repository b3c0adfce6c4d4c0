"""From unbiased frequency estimates to a distribution: Norm-Sub and the iterative Bayesian update.

Post-processing of released reports costs no privacy. Two estimators:

* :func:`norm_sub` — Norm-Sub of Wang, Lopuhaa-Zwakenberg, Li, Skoric & Li ("Locally
  Differentially Private Frequency Estimation with Consistency", NDSS 2020, Sec. IV): find the
  delta with sum_v max(f~(v) + delta, 0) = 1 and return max(f~ + delta, 0). It is the Euclidean
  projection of f~ onto the probability simplex, computed by sorting (Duchi, Shalev-Shwartz,
  Singer & Chandra, "Efficient Projections onto the l1-Ball for Learning in High Dimensions",
  ICML 2008): O(d log d), ``jit``-able.
* :func:`ibu` — the iterative Bayesian update (Agrawal & Aggarwal, "On the Design and
  Quantification of Privacy Preserving Data Mining Algorithms", PODS 2001; Elsalamouny &
  Palamidessi, "Generalized Iterative Bayesian Update and Applications to Mechanisms for
  Privacy Protection", EuroS&P 2020): the EM iteration for the maximum-likelihood distribution
  of the items given reports with known channel P(o | v),

      theta_v <- theta_v sum_o (c_o / n) P(o | v) / sum_u theta_u P(o | u),

  from the uniform distribution, a fixed number of iterations (``lax.fori_loop``: ``jit``-able,
  differentiable). :func:`ibu` takes the histogram of outputs and the channel matrix
  (:func:`grr_channel`, :func:`hadamard_channel`); :func:`ibu_supports` takes per-report
  support sets for the oracles whose output space is too large for a matrix (unary encoding,
  local hashing, subset selection): for all of them P(o_i | v) is proportional to e^eps0 when
  report i supports v and to 1 otherwise (the factor common to all v cancels), so

      theta_v <- theta_v (1/n) sum_i rho^(s_iv) / (1 + (rho - 1) sum_u s_iu theta_u),

  rho = e^eps0 (UE: p (1 - q) / ((1 - p) q)), two matrix-vector products per iteration.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.mechanisms.hadamard_response import hadamard_size, in_row_set
from ldpjax.types import Array, ArrayLike


def norm_sub(estimates: ArrayLike, total: ArrayLike = 1.0) -> Array:
    """Norm-Sub: max(f~ + delta, 0) summing to ``total`` (the projection onto the simplex),
    over the last axis.

    Example:
      >>> import jax.numpy as jnp
      >>> [round(f, 4) for f in norm_sub(jnp.array([0.7, 0.5, -0.2])).tolist()]  # delta = -0.1
      [0.6, 0.4, 0.0]
    """
    v.check_range("total", total, 0.0, jnp.inf, low_open=True, high_open=True)
    f = jnp.asarray(estimates, jnp.result_type(estimates, float))
    total = jnp.asarray(total, f.dtype)
    d = f.shape[-1]
    ordered = -jnp.sort(-f, axis=-1)
    excess = jnp.cumsum(ordered, axis=-1) - total[..., None]
    ranks = jnp.arange(1, d + 1, dtype=f.dtype)
    keep = ordered - excess / ranks > 0
    count = jnp.sum(keep, axis=-1, keepdims=True)  # >= 1: the largest entry always stays
    shift = jnp.take_along_axis(excess, jnp.maximum(count - 1, 0), axis=-1) / count
    return jnp.maximum(f - shift, 0.0)


def _check_iterations(num_iterations: int) -> int:
    if isinstance(num_iterations, bool) or not isinstance(num_iterations, int) or \
            num_iterations < 0:
        raise ValueError(f"num_iterations must be a Python integer >= 0; got {num_iterations!r}")
    return num_iterations


def ibu(counts: ArrayLike, channel: ArrayLike, num_iterations: int = 1000) -> Array:
    """The iterative Bayesian update from output counts c_o and the channel P(o | v).

    Args:
      counts: histogram of the reports over the outputs, shape (O,).
      channel: P(o | v), shape (O, d), columns summing to 1.
      num_iterations: EM iterations (static).

    Returns:
      The estimated distribution of the items, shape (d,).

    Example:
      >>> import jax.numpy as jnp
      >>> theta = ibu(jnp.array([60.0, 40.0]), grr_channel(jnp.log(3.0), 2), 200)
      >>> [round(t, 3) for t in theta.tolist()]  # the debiased (0.7, 0.3)
      [0.7, 0.3]
    """
    num_iterations = _check_iterations(num_iterations)
    channel = jnp.asarray(channel, jnp.result_type(channel, counts, float))
    counts = jnp.asarray(counts, channel.dtype)
    share = counts / jnp.maximum(jnp.sum(counts), 1.0)
    d = channel.shape[-1]

    def step(_, theta):
        mixture = channel @ theta
        ratio = jnp.where(mixture > 0, share / jnp.where(mixture > 0, mixture, 1.0), 0.0)
        return theta * (channel.T @ ratio)

    return jax.lax.fori_loop(0, num_iterations, step, jnp.full((d,), 1.0 / d, channel.dtype))


def ibu_supports(supports: ArrayLike, rho: ArrayLike, num_iterations: int = 1000) -> Array:
    """The iterative Bayesian update from per-report support sets (module docstring).

    Args:
      supports: s_iv = 1 where report i supports item v, shape (n, d) (rows with a -1 are
        invalid reports and skipped).
      rho: the likelihood ratio e^eps0 of a supported item, > 1.
      num_iterations: EM iterations (static).

    Returns:
      The estimated distribution of the items, shape (d,).

    Example:
      >>> import jax.numpy as jnp
      >>> s = jnp.array([[1, 0]] * 60 + [[0, 1]] * 40)  # GRR reports as support sets
      >>> [round(t, 3) for t in ibu_supports(s, 3.0, 200).tolist()]
      [0.7, 0.3]
    """
    num_iterations = _check_iterations(num_iterations)
    v.check_range("rho", rho, 1.0, jnp.inf, low_open=True, high_open=True)
    supports = jnp.asarray(supports)
    valid = jnp.all(supports >= 0, axis=-1)
    dtype = jnp.result_type(rho, float)
    s = jnp.where(valid[:, None], supports, 0).astype(dtype)
    rho = jnp.asarray(rho, dtype)
    weight = valid.astype(dtype) / jnp.maximum(jnp.sum(valid), 1).astype(dtype)
    d = s.shape[-1]

    def step(_, theta):
        inverse = weight / (1.0 + (rho - 1.0) * (s @ theta))
        return theta * (jnp.sum(inverse) + (rho - 1.0) * (s.T @ inverse))

    theta = jax.lax.fori_loop(0, num_iterations, step, jnp.full((d,), 1.0 / d, dtype))
    return v.valid_or_nan(rho > 1, theta, rho)


def grr_channel(eps: ArrayLike, d: int) -> Array:
    """P(o | v) of generalized randomized response: e^eps / (e^eps + d - 1) on the diagonal,
    1 / (e^eps + d - 1) off it, shape (d, d).

    Example:
      >>> grr_channel(0.0, 2).tolist()
      [[0.5, 0.5], [0.5, 0.5]]
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    q = 1.0 / (jnp.exp(eps) + d - 1.0)
    p = 1.0 / (1.0 + (d - 1.0) * jnp.exp(-eps))
    return jnp.where(jnp.eye(d, dtype=bool), p, q)


def hadamard_channel(eps: ArrayLike, d: int) -> Array:
    """P(j | v) of Hadamard response, shape (K, d): 2 e^eps / (K (e^eps + 1)) for j in C_v,
    2 / (K (e^eps + 1)) otherwise.

    Example:
      >>> hadamard_channel(0.0, 3).sum(axis=0).tolist()
      [1.0, 1.0, 1.0]
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    k = hadamard_size(d)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    inside = in_row_set(jnp.arange(d)[None, :], jnp.arange(k)[:, None])
    high = 2.0 / (k * (1.0 + jnp.exp(-eps)))
    return jnp.where(inside, high, 2.0 / k - high)


__all__ = [
    "grr_channel",
    "hadamard_channel",
    "ibu",
    "ibu_supports",
    "norm_sub",
]
