"""Regret bounds of private epsilon-greedy as differentiable functions of the budget gamma.

Ponte & Ferecatu, "A Privacy Budgeting Framework for Online Experimentation" (2026). With
eps_gamma = K / (K + e^gamma - 1) the exploration probability of K-ary randomized response at budget gamma (eq. 12):

* Constant strategy, eq. 15 (Theorem 1)::

      R_const(gamma) = T eps_gamma + c sqrt(K / eps_gamma) sqrt(T log T),

  with c = 4 sqrt 2 (``form="appendix"``, the constant of the appendix proof that Appendix I
  differentiates) or c = 1 (``form="simple"``, eq. 15 as printed). Note K / eps_gamma =
  K + e^gamma - 1.

* Capped dynamic strategy, eq. 18 (Theorem 2)::

      R_dyn(gamma) = A t^{2/3} K^{1/3} (log t)^{1/3} + eps_gamma (T - t)
                     + B sqrt(K / eps_gamma) (sqrt T - sqrt t) sqrt(log T),   t = min(t_gamma, T)

  with (A, B) = (1 + 2 sqrt 2, 4 sqrt 2) (``form="appendix"``) or (1, 1) (``form="simple"``).
  When t_gamma >= T only the first term remains (the budget never binds).

* t_gamma, the budget-exhaustion time, solves (K log t / t)^{1/3} = eps_gamma on the decreasing
  branch t >= e of K log t / t (eq. 17). It is found in u = log t (so that huge gamma does not
  overflow) by :func:`ldpjax.roots.bracketed_root`, whose gradient comes from the implicit
  function theorem. Where the paper is silent: when eps_gamma^3 >= K / e (only possible for
  K = 2 and gamma < 0.195) the capped schedule binds from the first visitor and t_gamma := e,
  the continuous limit of the root.

* Segment-aware bounds (per-segment clocks): with segment probabilities p_j the bound is the
  sum of the single-segment bounds at each segment's horizon T_j = p_j T (``segment_probs``).
  For J equal segments the leading T^{2/3} term of the dynamic bound becomes
  J^{1/3} A T^{2/3} K^{1/3} (log(T/J))^{1/3}: the paper's J^{1/3} factor.

* Privacy elasticities d log R / d log gamma (Theorem 3, Appendix I) come from ``jax.grad`` of
  these bounds: :func:`elasticity_constant`, :func:`elasticity_dynamic`.
  gamma*_const solves dR_const/dgamma = 0 (closed form for the appendix form:
  log(1 - K + (K^2 T / (8 log T))^{1/3})); gamma*_dyn is the smallest gamma with
  t_gamma >= T, i.e. the dynamic schedule's own spend at T: log(1 - K + K / eps_T),
  eps_T = (K log T / T)^{1/3}; beyond it the dynamic elasticity is exactly 0.

Every function is ``jit``/``vmap``/``grad``-able in float32 and float64 and broadcasts over
gamma, K and T. Arguments are validated when concrete (``ValueError`` naming the argument);
under ``jit`` out-of-domain entries give NaN.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import krr_budget
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike

APPENDIX_A = 1.0 + 2.0 * math.sqrt(2.0)
APPENDIX_B = 4.0 * math.sqrt(2.0)
FORMS = ("appendix", "simple")


def _form_constants(form: str) -> tuple[float, float]:
    """(A, B): the dynamic-bound constants; B is also the constant-bound coefficient."""
    if form == "appendix":
        return APPENDIX_A, APPENDIX_B
    if form == "simple":
        return 1.0, 1.0
    raise ValueError(f"form must be one of {FORMS}; got {form!r}")


def _floats(*xs):
    # lists and tuples (e.g. a list of budgets) become NumPy arrays first: jnp.result_type
    # cannot read them
    xs = tuple(np.asarray(x, np.float64) if isinstance(x, (list, tuple)) else x for x in xs)
    dtype = jnp.result_type(*xs, float)
    return tuple(jnp.asarray(x, dtype) for x in xs)


def _check_gamma(gamma) -> None:
    v.check_range("gamma", gamma, 0.0, jnp.inf)


def _check_k(K) -> None:
    v.check_integer("K", K, 2)


def _check_t(T) -> None:
    v.check_range("T", T, 1.0, jnp.inf, high_open=True)


def _log_m(gamma: Array, K: Array) -> Array:
    """log(K + e^gamma - 1) = log(K / eps_gamma), stable for every gamma in [0, inf]."""
    return jnp.logaddexp(jnp.log(K - 1.0), gamma)


def _valid(gamma, K, T) -> Array:
    return (gamma >= 0) & (K >= 2) & (T >= 1) & jnp.isfinite(T)


# ----------------------------------------------------------------------------- constant
def _constant(gamma, K, T, coef):
    log_m = _log_m(gamma, K)
    explore = jnp.exp(jnp.log(K) - log_m)
    t_log_t = T * jnp.log(T)
    finite = jnp.isfinite(log_m)
    sqrt_m = jnp.exp(0.5 * jnp.where(finite, log_m, 0.0))
    estimation = jnp.where(
        t_log_t > 0, coef * jnp.where(finite, sqrt_m, jnp.inf) * jnp.sqrt(t_log_t), 0.0
    )
    return T * explore + estimation


def regret_bound_constant(
    gamma: ArrayLike,
    K: ArrayLike,
    T: ArrayLike,
    *,
    form: str = "appendix",
    segment_probs: ArrayLike | None = None,
) -> Array:
    """Eq. 15: T eps_gamma + c sqrt(K + e^gamma - 1) sqrt(T log T) (c = 4 sqrt 2 or 1).

    Args:
      gamma: experiment budget, in [0, inf] (inf gives inf: pure greed has no guarantee).
      K: number of arms, integer >= 2 (a float array is fine; it is differentiable).
      T: horizon (visitors), in [1, inf).
      form: ``"appendix"`` (c = 4 sqrt 2, the default) or ``"simple"`` (c = 1).
      segment_probs: optional segment probabilities (1-d, sums to 1): the sum over segments of
        the bound at T_j = p_j T (segment-specific learning with per-segment clocks).

    Returns:
      The bound, broadcast over gamma, K and T. NaN for out-of-domain traced entries.

    Example:
      >>> import math
      >>> eps = 2 / (2 + math.e - 1)  # eq. 15, simple constants, K = 2, T = 1e4, gamma = 1
      >>> ref = 1e4 * eps + math.sqrt(2 + math.e - 1) * math.sqrt(1e4 * math.log(1e4))
      >>> bool(abs(float(regret_bound_constant(1.0, 2, 1e4, form="simple")) / ref - 1) < 1e-5)
      True
    """
    _check_gamma(gamma)
    _check_k(K)
    _check_t(T)
    _, coef = _form_constants(form)
    gamma, K, T = _floats(gamma, K, T)
    probs = _probs(segment_probs, T.dtype)
    return _constant_core(gamma, K, T, probs, coef)


def _probs(segment_probs, dtype):
    if segment_probs is None:
        return None
    v.check_sums_to_one("segment_probs", segment_probs)
    probs = jnp.asarray(segment_probs, dtype)
    if probs.ndim != 1:
        raise ValueError(f"segment_probs must be a 1-d vector; got shape {probs.shape}")
    return probs


@functools.partial(jax.jit, static_argnames=("coef",))
def _constant_core(gamma, K, T, probs, coef):
    if probs is None:
        out = _constant(gamma, K, T, coef)
    else:
        horizons = T[..., None] * probs
        out = jnp.sum(_constant(gamma[..., None], K[..., None], horizons, coef), axis=-1)
    return v.valid_or_nan(_valid(gamma, K, T), out)


# ----------------------------------------------------------------------------- t_gamma
def _log_exhaustion(gamma, K):
    """u = log t_gamma: root of c + log u - u = 0 on u >= 1, c = log K - 3 log eps_gamma."""
    log_eps = jnp.log(K) - _log_m(gamma, K)
    c = jnp.log(K) - 3.0 * log_eps
    finite = jnp.isfinite(c)
    has_root = finite & (c > 1.0)
    c_safe = jnp.where(has_root, c, 2.0)
    root = bracketed_root(lambda u, c: c + jnp.log(u) - u, 1.0, 2.0 * c_safe + 2.0, c_safe)
    return jnp.where(finite, jnp.where(has_root, root, 1.0), jnp.inf)


def budget_exhaustion_time(gamma: ArrayLike, K: ArrayLike) -> Array:
    """t_gamma: the visitor at which the capped dynamic schedule starts to bind (eq. 17).

    The root t >= e of (K log t / t)^{1/3} = K / (K + e^gamma - 1), found with
    :func:`ldpjax.roots.bracketed_root` (gradients by the implicit function theorem). When no
    root exists (eps_gamma^3 >= K / e: K = 2 and gamma < 0.195) the cap binds from the start
    and t_gamma = e. gamma = inf gives inf (and large gamma may overflow float32 to inf).

    Args:
      gamma: experiment budget, in [0, inf].
      K: number of arms, integer >= 2.

    Example:
      >>> import math
      >>> t = float(budget_exhaustion_time(1.0, 2))
      >>> round((2 * math.log(t) / t) ** (1 / 3) / (2 / (1 + math.e)), 4)  # eps_dyn = eps_gamma
      1.0
    """
    _check_gamma(gamma)
    _check_k(K)
    return _exhaustion_core(*_floats(gamma, K))


@jax.jit
def _exhaustion_core(gamma, K):
    return v.valid_or_nan((gamma >= 0) & (K >= 2), jnp.exp(_log_exhaustion(gamma, K)))


# ----------------------------------------------------------------------------- dynamic
def _dynamic(gamma, K, T, a_coef, b_coef):
    log_t_gamma = _log_exhaustion(gamma, K)
    log_T = jnp.log(T)
    log_t = jnp.minimum(log_t_gamma, log_T)
    learning = (
        a_coef * jnp.exp(2.0 * log_t / 3.0) * jnp.cbrt(K) * jnp.cbrt(jnp.maximum(log_t, 1e-30))
    )
    exhausted = log_t_gamma < log_T
    log_m = jnp.where(exhausted, _log_m(gamma, K), jnp.log(K))
    t = jnp.exp(log_t)
    explore = jnp.exp(jnp.log(K) - log_m) * (T - t)
    estimation = b_coef * jnp.exp(0.5 * log_m) * (jnp.sqrt(T) - jnp.sqrt(t)) * jnp.sqrt(log_T)
    return learning + jnp.where(exhausted, explore + estimation, 0.0)


def regret_bound_dynamic(
    gamma: ArrayLike,
    K: ArrayLike,
    T: ArrayLike,
    *,
    form: str = "appendix",
    segment_probs: ArrayLike | None = None,
) -> Array:
    """Eq. 18: the capped dynamic strategy's bound, with t = min(t_gamma, T).

    A t^{2/3} K^{1/3} (log t)^{1/3} + eps_gamma (T - t) + B sqrt(K / eps_gamma)
    (sqrt T - sqrt t) sqrt(log T); (A, B) = (1 + 2 sqrt 2, 4 sqrt 2) or (1, 1) for
    ``form="simple"``. Differentiable in gamma (t_gamma by the implicit function theorem) and K.

    Args:
      gamma: experiment budget, in [0, inf] (inf: the uncapped schedule of eq. 16).
      K: number of arms, integer >= 2.
      T: horizon, in [1, inf).
      form: ``"appendix"`` (default) or ``"simple"``.
      segment_probs: optional segment probabilities: sum of the bounds at T_j = p_j T.

    Example:
      >>> r = regret_bound_dynamic([0.5, 1.0, 3.0], 2, 1e4)
      >>> bool(r[0] >= r[1] >= r[2])  # more budget never raises the dynamic bound
      True
    """
    _check_gamma(gamma)
    _check_k(K)
    _check_t(T)
    a_coef, b_coef = _form_constants(form)
    gamma, K, T = _floats(gamma, K, T)
    return _dynamic_core(gamma, K, T, _probs(segment_probs, T.dtype), a_coef, b_coef)


@functools.partial(jax.jit, static_argnames=("a_coef", "b_coef"))
def _dynamic_core(gamma, K, T, probs, a_coef, b_coef):
    if probs is None:
        out = _dynamic(gamma, K, T, a_coef, b_coef)
    else:
        horizons = T[..., None] * probs
        out = jnp.sum(_dynamic(gamma[..., None], K[..., None], horizons, a_coef, b_coef), -1)
    return v.valid_or_nan(_valid(gamma, K, T), out)


# ----------------------------------------------------------------------------- elasticities
def _elasticity(which, gamma, K, T, form="appendix", segment_probs=None):
    gamma, K, T = _floats(gamma, K, T)
    a_coef, b_coef = _form_constants(form)
    probs = _probs(segment_probs, T.dtype)
    return _elasticity_core(gamma, K, T, probs, which, a_coef, b_coef)


@functools.partial(jax.jit, static_argnames=("which", "a_coef", "b_coef"))
def _elasticity_core(gamma, K, T, probs, which, a_coef, b_coef):
    shape = jnp.broadcast_shapes(gamma.shape, K.shape, T.shape)
    flat = [jnp.broadcast_to(x, shape).ravel() for x in (gamma, K, T)]

    def bound(g, k, t):
        if which == "constant":
            return _constant_core(g, k, t, probs, b_coef)
        return _dynamic_core(g, k, t, probs, a_coef, b_coef)

    def one(g, k, t):
        value, slope = jax.value_and_grad(bound)(g, k, t)
        return jnp.where(g > 0, g * slope / value, 0.0)

    return jax.vmap(one)(*flat).reshape(shape)


def elasticity_constant(gamma: ArrayLike, K: ArrayLike, T: ArrayLike, **kwargs) -> Array:
    """Privacy elasticity d log R_const / d log gamma = gamma R'(gamma) / R, by ``jax.grad``.

    Negative: more budget lowers the bound; zero at gamma*_const; positive beyond.
    ``kwargs`` (``form``, ``segment_probs``) go to :func:`regret_bound_constant`.

    Args:
      gamma: in [0, inf) (the elasticity at gamma = 0 is 0).
      K: integer >= 2.
      T: in [1, inf).

    Example:
      >>> g = gamma_star_constant(2, 1e4)
      >>> bool(abs(float(elasticity_constant(g, 2, 1e4))) < 1e-3)  # zero at gamma*_const
      True
    """
    _check_k(K)
    _check_t(T)
    v.check_range("gamma", gamma, 0.0, jnp.inf, high_open=True)
    return _elasticity("constant", gamma, K, T, **kwargs)


def elasticity_dynamic(gamma: ArrayLike, K: ArrayLike, T: ArrayLike, **kwargs) -> Array:
    """Privacy elasticity d log R_dyn / d log gamma of eq. 18, by ``jax.grad``.

    The gradient of t_gamma comes from the implicit function theorem (Appendix I's implicit
    differentiation). Non-positive; exactly 0 once t_gamma >= T (gamma >= gamma*_dyn).

    Args:
      gamma: in [0, inf).
      K: integer >= 2.
      T: in [1, inf).

    Example:
      >>> bool(float(elasticity_dynamic(0.5, 2, 1e4)) <= 0.0)
      True
    """
    _check_k(K)
    _check_t(T)
    v.check_range("gamma", gamma, 0.0, jnp.inf, high_open=True)
    return _elasticity("dynamic", gamma, K, T, **kwargs)


# ----------------------------------------------------------------------------- optimal budgets
def gamma_star_constant(K: ArrayLike, T: ArrayLike, *, form: str = "appendix") -> Array:
    """The regret-minimising budget of the constant strategy, by optimisation.

    Solves the first-order condition dR_const/dgamma = 0 (derivative by autodiff) with
    :func:`ldpjax.roots.bracketed_root` (Newton with bisection safeguard); gradients in K and T
    by the implicit function theorem. Returns 0 where the bound increases from gamma = 0 (tiny
    T). For ``form="appendix"`` this equals log(1 - K + (K^2 T / (8 log T))^{1/3}).

    Args:
      K: integer >= 2.
      T: in [1, inf).
      form: ``"appendix"`` or ``"simple"``.

    Example:
      >>> round(float(gamma_star_constant(2, 1e4)), 2), round(float(gamma_star_constant(2, 1e6)), 2)
      (1.97, 3.47)
    """
    _check_k(K)
    _check_t(T)
    _, coef = _form_constants(form)
    return _gamma_star_constant_core(*_floats(K, T), coef)


@functools.partial(jax.jit, static_argnames=("coef",))
def _gamma_star_constant_core(K, T, coef):
    def slope(gamma, k, t):
        # dR/dgamma / T, elementwise (R is elementwise in gamma).
        return jax.grad(lambda g: jnp.sum(_constant(g, k, t, coef)))(gamma) / t

    # The slope has the sign of M^{3/2} - 2 T K / (c sqrt(T log T)), M = K + e^gamma - 1, so
    # gamma = log(K + 2 m^{2/3}) with m = 2 T K / (c sqrt(T log T)) brackets the root.
    t_log_t = jnp.maximum(T * jnp.log(T), 1e-30)
    m = 2.0 * T * K / (coef * jnp.sqrt(t_log_t))
    hi = jnp.log(K + 2.0 * m ** (2.0 / 3.0))
    shape = jnp.broadcast_shapes(K.shape, T.shape)
    K_b, T_b = jnp.broadcast_to(K, shape), jnp.broadcast_to(T, shape)
    root = bracketed_root(slope, jnp.zeros(shape, K.dtype), hi, K_b, T_b)
    interior = slope(jnp.zeros(shape, K.dtype), K_b, T_b) < 0
    out = jnp.where(interior, root, 0.0)
    return v.valid_or_nan((K >= 2) & (T >= 1) & jnp.isfinite(T), out)


def gamma_star_dynamic(K: ArrayLike, T: ArrayLike) -> Array:
    """The smallest budget at which the capped dynamic schedule never binds (t_gamma >= T).

    gamma*_dyn = log(1 - K + K / eps_T) with eps_T = min(1, (K log T / T)^{1/3}) (via
    :func:`ldpjax.accounting.krr_budget`): the uncapped schedule's spend at T. The dynamic
    elasticity is 0 from there on (more budget buys nothing). 0 for T <= e.

    Args:
      K: integer >= 2.
      T: in [1, inf).

    Example:
      >>> import math
      >>> eps_T = (2 * math.log(1e4) / 1e4) ** (1 / 3)
      >>> bool(abs(float(gamma_star_dynamic(2, 1e4)) - math.log(1 - 2 + 2 / eps_T)) < 1e-4)
      True
    """
    _check_k(K)
    _check_t(T)
    return _gamma_star_dynamic_core(*_floats(K, T))


@jax.jit
def _gamma_star_dynamic_core(K, T):
    log_T = jnp.log(jnp.maximum(T, math.e))
    eps_T = jnp.minimum(1.0, jnp.cbrt(K * log_T / jnp.maximum(T, math.e)))
    out = jnp.where(T > math.e, krr_budget(eps_T, K), 0.0)
    return v.valid_or_nan((K >= 2) & (T >= 1) & jnp.isfinite(T), out)


__all__ = [
    "APPENDIX_A",
    "APPENDIX_B",
    "FORMS",
    "budget_exhaustion_time",
    "elasticity_constant",
    "elasticity_dynamic",
    "gamma_star_constant",
    "gamma_star_dynamic",
    "regret_bound_constant",
    "regret_bound_dynamic",
]
