"""Privacy amplification by adaptive batching in RW-AdaBatch.

"Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026), Sec. 4.2.

A round-t data point of RW-AdaBatch only reaches the actions through the sum of its batch.
If the batch has B rounds, that sum carries N(0, B eta^2 I) noise while one gain vector moves
it by at most sqrt(n), so the point is (mu / sqrt B)-GDP in the central sense
(:func:`ex_post_mu`). The batch size is random and revealed, and it does not depend on the
point itself (it is fixed from data before the batch), so ex ante round t is private as the
revealed mixture of the mu / sqrt(B)-GDP mechanisms with B ~ law of the batch size of round t
(the paper's Lemma 2; ``ldpjax.accounting.gdp_mixture_delta`` / ``gdp_mixture_tradeoff``).

Analytic worst case (Theorem 2 and Lemma 1). The gap of the noisy cumulative gains is
stochastically smallest when the true cumulative gains are tied (G_{t-1} = 0), and a
stochastically smaller batch-size law gives a smaller (less private) tradeoff curve. In that
worst case G~_{t-1} is a sum of t iid N(0, eta^2 I_n) vectors, so its gap is eta sqrt(t) K
with K the top-two gap of n iid standard normals, whose CDF and density are

    F_k(e) = 1 - n int phi(x) Phi(x - e)^{n-1} dx,
    f_k(e) = n (n - 1) int phi(x) phi(x - e) Phi(x - e)^{n-2} dx

(:func:`gap_cdf`, :func:`gap_pdf`, Gauss-Legendre quadrature on [-12, 12]).

Our exact reading (the paper gives no formula for it; documented in the README):

* The batch size of a round-t point is the length of the batch that contains round t
  (RW-AdaBatch's ``batch_size`` output), and that point is (mu / sqrt B)-GDP given it.
* A batch that starts at round s gets B_s = ComputeDelay(k_s, s, eta, n, alpha) from the gap
  k_s of G~_{s-1} (s noise vectors). In the worst case its survival function is exact
  (:func:`batch_survival`):

      P(B_s >= b) = 1 - F_k(e_b(s)),  e_b(s) = max(0, beta*_b + sqrt(log(2n - 2))) sqrt(2b / s),

  where beta*_b solves p(beta) = alpha sqrt(log n / (s + b)) (p of Theorem 1 as a function of
  beta, strictly decreasing; ``ldpjax.roots.bracketed_root``), because b is admissible iff
  beta(k, b) >= beta*_b iff k >= eta sqrt(s) e_b(s). It does not depend on eta, i.e. on mu.
* The batch containing round t started at some s <= t, and ComputeDelay is less generous for
  earlier starts. We take P(B >= b) = P(B_{s_b} >= b) with s_b = max(1, t - b + 1), the
  earliest start of a length-b batch that still reaches t (:func:`covering_batch_survival`).
  This understates long batches on purpose (Lemma 1: a stochastically smaller law is still a
  valid lower bound on the amplification). The law of a fresh batch at t alone is not
  enough: Monte Carlo shows it overstating long batches, because the batch that contains t
  usually started earlier. The test suite checks that our analytic law is stochastically
  below the simulated one and that the analytic curves never claim more privacy than the
  Monte Carlo ones, beyond Monte Carlo error.
* For the mixture we bin the law on a fixed grid of sizes (every integer up to 40, then a
  geometric grid of ratio 1.05 up to 2^30; :func:`batch_grid`) and give each bin's mass to its
  smallest size: stochastically smaller again, and mu_B is overstated by at most
  sqrt(1.05) - 1 = 2.5% within a bin.

Monte Carlo. :func:`worst_case_batch_sizes` simulates RW-AdaBatch on tied gains and returns,
for each run, the size of the batch that contains each requested round (the ``batch_size``
output of :mod:`~ldpjax.experts.rw_adabatch`). It runs the batch-level chain (one loop
iteration per batch, the batch's noise drawn as one N(0, B I) vector, which is the sum of its
B rounds' noise in distribution) with the algorithm's own :func:`~ldpjax.experts.rw_adabatch.plan_batch`;
a test checks it against the round-by-round algorithm run through the engine. The empirical
law (:func:`empirical_batch_distribution`) goes through the same mixture formulas
(:func:`batch_mixture_delta`, :func:`batch_mixture_tradeoff`); :func:`batch_mixture_delta_se`
gives the Monte Carlo standard error of delta(eps). Those, and the binning of a law, are the
accounting of any batch-size law and live in :mod:`ldpjax.accounting.amplification` (re-exported
here); this module holds RW-AdaBatch's own law.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax._special import log_ndtr
from ldpjax.accounting import amplification as _acc_amp
from ldpjax.accounting import (
    gdp_delta,  # noqa: F401  (the examples use it)
    gdp_mixture_delta,
    gdp_mixture_tradeoff,
)
from ldpjax.accounting.amplification import (
    batch_mixture_event,
    binned_law,
)
from ldpjax.accounting.amplification import floats as _floats
from ldpjax.experts.bounds import MAX_DELAY, _p_of_beta
from ldpjax.experts.rw_adabatch import plan_batch
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike, PRNGKey

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_QUAD_RANGE = 12.0
_QUAD_PANELS = 120
_QUAD_ORDER = 8


def _quadrature_nodes() -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes and weights on [-12, 12] (120 panels x 8 nodes)."""
    x, w = np.polynomial.legendre.leggauss(_QUAD_ORDER)
    edges = np.linspace(-_QUAD_RANGE, _QUAD_RANGE, _QUAD_PANELS + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * x[None, :]).ravel()
    weights = (half[:, None] * w[None, :]).ravel()
    return nodes, weights


_NODES, _WEIGHTS = _quadrature_nodes()


def _log_phi(x: Array) -> Array:
    return -0.5 * x * x - _LOG_SQRT_2PI


def _check_gap_args(e, n):
    v.check_range("e", e, 0.0, jnp.inf)
    v.check_integer("n", n, 2)


def _prepare(e, n):
    e, n = _floats(e, n)
    e, n = jnp.broadcast_arrays(e, n)
    valid = (e >= 0) & (n >= 2)
    finite = jnp.isfinite(e)
    safe_e = jnp.where(finite & valid, e, 0.0)[..., None]
    safe_n = jnp.where(valid, n, 2.0)[..., None]
    x = jnp.asarray(_NODES, e.dtype)
    w = jnp.asarray(_WEIGHTS, e.dtype)
    return safe_e, safe_n, x, w, valid, finite


@jax.jit
def _gap_cdf_and_sf(e, n):
    """(F_k(e), 1 - F_k(e)), each from the form that has no cancellation where it is small."""
    safe_e, safe_n, x, w, valid, finite = _prepare(e, n)
    log_top = log_ndtr(x)
    log_shifted = log_ndtr(x - safe_e)
    count = safe_n[..., 0]
    # F = n int phi(x) [Phi(x)^{n-1} - Phi(x-e)^{n-1}] dx
    #   = n int phi(x) Phi(x)^{n-1} (-expm1((n-1)(log Phi(x-e) - log Phi(x)))) dx.
    log_base = _log_phi(x) + (safe_n - 1.0) * log_top
    shrink = -jnp.expm1((safe_n - 1.0) * (log_shifted - log_top))
    cdf = count * jnp.sum(w * jnp.exp(log_base) * shrink, axis=-1)
    # 1 - F = n int phi(x) Phi(x-e)^{n-1} dx  (accurate, relatively, in the tail).
    sf = count * jnp.sum(w * jnp.exp(_log_phi(x) + (safe_n - 1.0) * log_shifted), axis=-1)
    cdf = jnp.where(cdf < 0.5, cdf, 1.0 - sf)
    sf = jnp.where(sf < 0.5, sf, 1.0 - cdf)
    cdf = jnp.where(finite, jnp.clip(cdf, 0.0, 1.0), 1.0)
    sf = jnp.where(finite, jnp.clip(sf, 0.0, 1.0), 0.0)
    return v.valid_or_nan(valid, cdf), v.valid_or_nan(valid, sf)


@jax.jit
def _gap_pdf(e, n):
    safe_e, safe_n, x, w, valid, finite = _prepare(e, n)
    shifted = x - safe_e
    log_terms = _log_phi(x) + _log_phi(shifted) + (safe_n - 2.0) * log_ndtr(shifted)
    count = safe_n[..., 0]
    pdf = count * (count - 1.0) * jnp.sum(w * jnp.exp(log_terms), axis=-1)
    pdf = jnp.where(finite, pdf, 0.0)
    return v.valid_or_nan(valid, pdf)


def gap_cdf(e: ArrayLike, n: ArrayLike) -> Array:
    """F_k(e): CDF of the top-two gap of n iid N(0, 1) (the paper's Theorem 2).

    F_k(e) = 1 - n int phi(x) Phi(x - e)^{n-1} dx. Evaluated by composite Gauss-Legendre
    quadrature (960 nodes on [-12, 12]) in the form n int phi(x) [Phi(x)^{n-1} -
    Phi(x - e)^{n-1}] dx where F is small (no cancellation at small e) and as 1 minus the
    tail integral where F is close to 1.

    Args:
      e: standardised gap (gap / (eta sqrt t)), in [0, inf]; broadcast against ``n``.
      n: number of experts, an integer >= 2 (may be an array: vectorised over n).

    Returns:
      F_k(e) in [0, 1]; differentiable in e (d/de = :func:`gap_pdf`). NaN for traced
      out-of-domain entries.

    Example:
      >>> round(float(gap_cdf(1.0, 2)), 5)  # n = 2: |N(0, 2)|, 2 Phi(1/sqrt2) - 1
      0.5205
    """
    _check_gap_args(e, n)
    return _gap_cdf_and_sf(*_floats(e, n))[0]


def gap_pdf(e: ArrayLike, n: ArrayLike) -> Array:
    """f_k(e) = n (n - 1) int phi(x) phi(x - e) Phi(x - e)^{n-2} dx (Theorem 2).

    Args:
      e: standardised gap, in [0, inf] (``inf`` gives 0).
      n: number of experts, an integer >= 2.

    Returns:
      The density of the top-two gap of n iid N(0, 1) (same quadrature as :func:`gap_cdf`);
      for n = 2 it is the half-normal density of |N(0, 2)|. Differentiable in e.

    Example:
      >>> bool(gap_pdf(1.0, 5) > 0)
      True
    """
    _check_gap_args(e, n)
    return _gap_pdf(*_floats(e, n))


# --------------------------------------------------------------------------- worst-case law
def _log_p_residual(beta: Array, log_target: Array) -> Array:
    return jnp.log(_p_of_beta(beta)) - log_target


def _beta_threshold(target: Array) -> Array:
    """beta* with p(beta*) = target, for target in (0, 2) (p strictly decreasing in beta).

    Bracket: p(beta) <= (1 + sqrt2) exp(-beta^2 / 2) for beta >= 0 and
    p(beta) >= 2 - (1 + sqrt2) exp(-beta^2 / 2) for beta <= 0.
    """
    c = 1.0 + math.sqrt(2.0)
    hi = jnp.sqrt(2.0 * jnp.log(c / target)) + 0.5
    hi = jnp.where(target < 1.0, hi, 0.5)
    lo = -jnp.sqrt(2.0 * jnp.log(c / (2.0 - target))) - 0.5
    lo = jnp.where(target > 1.0, lo, -0.5)
    return bracketed_root(_log_p_residual, lo, hi, jnp.log(target), num_iters=60)


def batch_survival(b: ArrayLike, t: ArrayLike, n: ArrayLike, alpha: ArrayLike) -> Array:
    """P(B_t >= b) for the worst-case (tied gains) batch length of a batch starting at round t.

    P(B_t >= b) = 1 - F_k(e_b(t)) with e_b(t) = max(0, beta*_b + sqrt(log(2n - 2)))
    sqrt(2b / t) and p(beta*_b) = alpha sqrt(log n / (t + b)); 1 for b <= 1. Independent of
    eta (mu). Differentiable in t and alpha (implicit gradients through the root).

    Args:
      b: batch length, >= 1 (real values allowed).
      t: 1-based round, >= 1.
      n: number of experts, an integer >= 2.
      alpha: ComputeDelay's knob, in (0, inf).

    Example:
      >>> float(batch_survival(1.0, 10.0, 4, 0.01))  # every batch has >= 1 round
      1.0
    """
    v.check_range("b", b, 1.0, jnp.inf, high_open=True)
    v.check_range("t", t, 1.0, jnp.inf, high_open=True)
    v.check_integer("n", n, 2)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    b, t, n, alpha = _floats(b, t, n, alpha)
    b, t, n, alpha = jnp.broadcast_arrays(b, t, n, alpha)
    valid = (b >= 1) & (t >= 1) & (n >= 2) & (alpha > 0) & jnp.isfinite(b * t * alpha)
    b = jnp.where(valid, b, 2.0)
    t = jnp.where(valid, t, 1.0)
    n = jnp.where(valid, n, 2.0)
    alpha = jnp.where(valid, alpha, 0.01)
    out = _survival(b, t, n, alpha)
    return v.valid_or_nan(valid, out)


@jax.jit
def _survival(b, start, n, alpha):
    """P(ComputeDelay >= b) for a batch starting at round ``start`` (worst case)."""
    target = alpha * jnp.sqrt(jnp.log(n) / (start + b))
    solvable = target < 2.0  # p < 2 everywhere: target >= 2 admits every gap
    safe_target = jnp.where(solvable, target, 1.0)
    beta_star = _beta_threshold(safe_target)
    offset = jnp.sqrt(jnp.log(2.0 * n - 2.0))
    threshold = jnp.maximum(beta_star + offset, 0.0) * jnp.sqrt(2.0 * b / start)
    threshold = jnp.where(solvable, threshold, 0.0)
    survival = _gap_cdf_and_sf(threshold, n)[1]
    return jnp.where(b <= 1.0, 1.0, survival)


def covering_batch_survival(b: ArrayLike, t: ArrayLike, n: ArrayLike, alpha: ArrayLike) -> Array:
    """Analytic worst-case survival function of the batch that *contains* round t.

    ``batch_survival(b, max(1, t - b + 1), n, alpha)``. A batch of length B >= b containing
    round t started at some round s in [t - B + 1, t]. ComputeDelay is less generous the
    earlier a batch starts (the worst-case gap scale eta sqrt(s) is smaller), so we evaluate
    the length-b question at s_b = max(1, t - b + 1), the earliest start of a length-b batch
    that still reaches round t. This understates long batches on purpose: by Lemma 1 a
    stochastically smaller law still gives a valid lower bound on the amplification. (The law
    of a fresh batch starting at t, ``batch_survival(b, t, ...)``, is *not* a valid stand-in:
    the batch that contains t usually started earlier, and a 40000-run Monte Carlo shows the
    fresh law overstating the chance of long batches by up to ~10 standard errors.)

    Args: as in :func:`batch_survival`.

    Example:
      >>> float(covering_batch_survival(1.0, 10.0, 4, 0.01))
      1.0
    """
    v.check_range("b", b, 1.0, jnp.inf, high_open=True)
    v.check_range("t", t, 1.0, jnp.inf, high_open=True)
    b, t = _floats(b, t)
    return batch_survival(b, jnp.maximum(1.0, t - b + 1.0), n, alpha)


def batch_grid(ratio: float = 1.05, exact_up_to: int = 40) -> np.ndarray:
    """The batch sizes used to bin the worst-case law: 1..exact_up_to, then x ratio to 2^30.

    :func:`ldpjax.accounting.amplification.batch_grid` up to ComputeDelay's largest delay.
    Returns a float64 NumPy array of strictly increasing integers starting at 1.
    """
    return _acc_amp.batch_grid(ratio, exact_up_to, MAX_DELAY)


def worst_case_batch_distribution(
    t: ArrayLike, n: ArrayLike, alpha: ArrayLike, sizes: ArrayLike | None = None
) -> tuple[Array, Array]:
    """Binned analytic worst-case law of the size of the batch containing round t.

    With S(b) = :func:`covering_batch_survival`, bin i = [sizes_i, sizes_{i+1}) gets the mass
    S(sizes_i) - S(sizes_{i+1}) (the last bin S(sizes_M)), placed on its smallest size
    sizes_i: a stochastically smaller law, hence a valid lower bound on the amplification
    (Lemma 1).

    Args:
      t: 1-based round(s), >= 1; n: experts (integer >= 2); alpha: in (0, inf). Broadcast.
      sizes: the bin edges (strictly increasing, first entry 1); default :func:`batch_grid`.

    Returns:
      ``(sizes, weights)``: sizes (M,) and weights of shape broadcast(t, n, alpha) + (M,),
      non-negative and summing to 1 on the last axis.

    Example:
      >>> sizes, weights = worst_case_batch_distribution(50.0, 10, 0.01)
      >>> bool(jnp.isclose(weights.sum(), 1.0, atol=1e-5))
      True
    """
    v.check_range("t", t, 1.0, jnp.inf, high_open=True)
    v.check_integer("n", n, 2)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    grid = batch_grid() if sizes is None else np.asarray(sizes, np.float64)
    if grid.ndim != 1 or grid[0] != 1 or np.any(np.diff(grid) <= 0):
        raise ValueError("sizes must be a strictly increasing 1-d grid starting at 1")
    t, n, alpha = _floats(t, n, alpha)
    grid_j = jnp.asarray(grid, t.dtype)
    return grid_j, _binned_weights(grid_j, t, n, alpha)


@jax.jit
def _binned_weights(grid, t, n, alpha):
    t, n, alpha = jnp.broadcast_arrays(t, n, alpha)
    valid = (t >= 1) & (n >= 2) & (alpha > 0) & jnp.isfinite(t * alpha)
    t, n, alpha = [
        jnp.where(valid, x, d)[..., None] for x, d in ((t, 1.0), (n, 2.0), (alpha, 0.01))
    ]
    survival = _survival(grid, jnp.maximum(1.0, t - grid + 1.0), n, alpha)  # covering law
    return v.valid_or_nan(valid[..., None], binned_law(survival))


# --------------------------------------------------------------------------- mixtures
def _check_amplified(mu, t, n, alpha):
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range("t", t, 1.0, jnp.inf, high_open=True)
    v.check_integer("n", n, 2)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)


@functools.partial(jax.jit, static_argnames=("curve",))
def _amplified(mu, t, n, alpha, x, grid, curve):
    weights = _binned_weights(grid, t, n, alpha)
    shape = jnp.broadcast_shapes(mu.shape, x.shape, weights.shape[:-1])
    weights = jnp.broadcast_to(weights, shape + weights.shape[-1:])
    mus = jnp.broadcast_to(mu, shape)[..., None] / jnp.sqrt(grid)
    if curve == "delta":
        return gdp_mixture_delta(mus, weights, x)
    return gdp_mixture_tradeoff(mus, weights, x)


def amplified_delta(
    mu: ArrayLike, t: ArrayLike, n: ArrayLike, alpha: ArrayLike, eps: ArrayLike
) -> Array:
    """Analytic worst-case delta(eps) of round t of RW-AdaBatch (Theorem 2, Lemmas 1-2).

    The revealed mixture of (mu / sqrt B)-GDP mechanisms over the binned worst-case law of
    :func:`worst_case_batch_distribution`.

    Args:
      mu: per-round GDP parameter, in (0, inf); t: round(s) >= 1; n: experts (integer >= 2);
      alpha: ComputeDelay's knob, in (0, inf); eps: in [0, inf]. All broadcast against each
      other (vectorised over t, mu, eps, n).

    Returns:
      delta(eps): what the analytic bound certifies for round t (never below the truth in
      the worst case, up to the approximations stated in the module docstring).

    Example:
      >>> bool(amplified_delta(1.0, 100.0, 10, 0.01, 1.0) <= gdp_delta(1.0, 1.0))
      True
    """
    _check_amplified(mu, t, n, alpha)
    v.check_range("eps", eps, 0.0, jnp.inf)
    mu, t, n, alpha, eps = _floats(mu, t, n, alpha, eps)
    grid = jnp.asarray(batch_grid(), mu.dtype)
    return _amplified(mu, t, n, alpha, eps, grid, "delta")


def amplified_tradeoff(
    mu: ArrayLike, t: ArrayLike, n: ArrayLike, alpha: ArrayLike, fpr: ArrayLike
) -> Array:
    """Analytic worst-case tradeoff curve of round t (a lower bound on the true curve).

    Arguments as in :func:`amplified_delta`, with ``fpr`` the type I error in [0, 1]; returns
    the type II error.

    Example:
      >>> bool(0.0 <= amplified_tradeoff(1.0, 100.0, 10, 0.01, 0.05) <= 0.95)
      True
    """
    _check_amplified(mu, t, n, alpha)
    v.check_range("fpr", fpr, 0.0, 1.0)
    mu, t, n, alpha, fpr = _floats(mu, t, n, alpha, fpr)
    grid = jnp.asarray(batch_grid(), mu.dtype)
    return _amplified(mu, t, n, alpha, fpr, grid, "tradeoff")


# --------------------------------------------------------------------------- Monte Carlo
def amplified_event(mu: ArrayLike, t: ArrayLike, n: ArrayLike, alpha: ArrayLike):
    """RW-AdaBatch's central claim for a round-t record as a privacy event (analytic worst case).

    The revealed mixture (the paper's Lemma 2) of (mu / sqrt B)-GDP releases over the binned
    worst-case law of the size B of the batch containing round t
    (:func:`worst_case_batch_distribution`): a
    :class:`~ldpjax.accounting.GaussianMixtureEvent` that the accountants
    (``ldpjax.accounting.delta`` / ``epsilon`` / ``tradeoff``) take. It holds where only the
    batch sums are observed (RW-AdaBatch's actions, or its fast path's batch releases); each
    observed per-round release is ``GaussianEvent(mu)``. A whole run's per-record claim is the
    worst round: ``max_t delta(amplified_event(mu, t, ...), eps)`` (each record is in one
    round). ``t`` may be an array (leading axes of the event).

    Example:
      >>> from ldpjax.accounting import GaussianEvent, delta
      >>> event = amplified_event(1.0, 100.0, 10, 0.01)
      >>> bool(delta(event, 1.0) <= delta(GaussianEvent(1.0), 1.0))
      True
    """
    _check_amplified(mu, t, n, alpha)
    mu_f, t_f, n_f, alpha_f = _floats(mu, t, n, alpha)
    grid = jnp.asarray(batch_grid(), mu_f.dtype)
    return batch_mixture_event(mu_f, grid, _binned_weights(grid, t_f, n_f, alpha_f))


@functools.partial(jax.jit, static_argnames=("num_experts", "rounds", "num_runs"))
def _worst_case_batch_sizes(key, alpha, *, num_experts, rounds, num_runs):
    targets = jnp.asarray(rounds, jnp.int32)
    last = targets[-1]
    dtype = jnp.result_type(float)

    def one_run(run_key):
        # Monte Carlo of the batch chain for accounting (no data is released here): the noise of
        # RW-AdaBatch's walk on tied gains, eta = 1.
        init_key, walk_key = jax.random.split(run_key)
        noisy_total = jax.random.normal(init_key, (num_experts,), dtype)  # z_0 (eta = 1)
        covering = jnp.zeros(targets.shape, jnp.int32)

        def cond(carry):
            return carry[1] <= last

        def body(carry):
            noisy_total, round_index, covering = carry
            _, size = plan_batch(noisy_total, round_index, jnp.ones((), dtype), alpha)
            covers = (targets >= round_index) & (targets - round_index < size)
            covering = jnp.where(covers, size, covering)
            noise = jax.random.normal(
                jax.random.fold_in(walk_key, round_index), (num_experts,), dtype
            )
            noisy_total = noisy_total + jnp.sqrt(size.astype(dtype)) * noise
            return noisy_total, round_index + size, covering

        start = (noisy_total, jnp.ones((), jnp.int32), covering)
        return jax.lax.while_loop(cond, body, start)[2]

    keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(jnp.arange(num_runs))
    return jax.vmap(one_run)(keys)


def worst_case_batch_sizes(
    key: PRNGKey, num_experts: int, alpha: ArrayLike, rounds, num_runs: int
) -> Array:
    """Monte Carlo: size of the batch containing each round, RW-AdaBatch on tied gains.

    Simulates the batch-level chain of RW-AdaBatch in the worst case (all true cumulative
    gains tied, so only the noise moves the leader; the gap and the noise both scale with eta,
    so the batch sizes do not depend on mu and eta = 1 is used): at a batch start s the
    batch length is ``plan_batch`` (ComputeDelay) of the noisy cumulative vector, which then
    receives the batch's noise sum, drawn as sqrt(B) N(0, I_n). Equal in distribution to the
    ``batch_size`` output of :func:`~ldpjax.experts.rw_adabatch.rw_adabatch` on
    :func:`~ldpjax.experts.environments.equal_gains` (tested), at a cost of one iteration per
    batch instead of per round.

    Args:
      key: PRNG key (run r uses ``fold_in(key, r)``).
      num_experts: n >= 2 (static).
      alpha: ComputeDelay's knob, in (0, inf) (scalar).
      rounds: strictly increasing 1-based rounds to report (static tuple of ints).
      num_runs: number of independent runs (static).

    Returns:
      int32 array (num_runs, len(rounds)) of batch sizes.

    Example:
      >>> worst_case_batch_sizes(jax.random.key(0), 4, 0.01, (1, 10), 3).shape
      (3, 2)
    """
    v.check_integer("num_experts", num_experts, 2)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_integer("num_runs", num_runs, 1)
    rounds = tuple(int(r) for r in np.atleast_1d(np.asarray(rounds)))
    if (
        not rounds
        or rounds[0] < 1
        or any(b <= a for a, b in zip(rounds[:-1], rounds[1:], strict=True))
    ):
        raise ValueError(f"rounds must be strictly increasing integers >= 1; got {rounds}")
    return _worst_case_batch_sizes(
        key,
        jnp.asarray(alpha, jnp.result_type(float)),
        num_experts=int(num_experts),
        rounds=rounds,
        num_runs=int(num_runs),
    )


__all__ = [
    "amplified_delta",
    "amplified_event",
    "amplified_tradeoff",
    "batch_grid",
    "batch_survival",
    "covering_batch_survival",
    "gap_cdf",
    "gap_pdf",
    "worst_case_batch_distribution",
    "worst_case_batch_sizes",
]
