"""Amplification by subsampling: a release run on a random sample of the records.

Two events, with the semantics of dp_accounting's ``PoissonSampledDpEvent`` and
``SampledWithoutReplacementDpEvent`` (Balle, Barthe & Gaboardi, "Privacy Amplification by
Subsampling: Tight Analyses via Couplings and Divergences", NeurIPS 2018):

* :class:`PoissonSampledEvent` ``(event, probability)``: each record enters the sample
  independently with probability q, then ``event`` runs on the sample. The claim is for adding
  or removing one record (dp_accounting's ``ADD_OR_REMOVE_ONE``), and ``event`` must describe
  the release for that relation (a sum of values of norm at most 1 with N(0, sigma^2) noise is
  ``GaussianEvent(1 / sigma)``). With (P, Q) the worst pair of ``event`` (with / without the
  record) the subsampled release has two worst pairs (Zhu, Dong & Wang, "Optimal Accounting of
  Differential Privacy via Characteristic Function", AISTATS 2022, Thm 11):
  remove (q P + (1 - q) Q, Q) and add (Q, q P + (1 - q) Q). Its PLD keeps both directions,
  composes each with its own, and reports the larger delta (dp_accounting's convention).
* :class:`SampledWithoutReplacementEvent` ``(event, sample_size, population_size)``: a sample of
  m distinct records out of n, q = m / n. The claim is for replacing one record (dp_accounting's
  ``REPLACE_ONE``), ``event`` describing the release for that relation. By advanced joint
  convexity (Balle, Barthe & Gaboardi 2018, Thm 2) delta'(eps') <= q delta(eps) with
  e^eps = 1 + (e^eps' - 1) / q for eps' >= 0, which is the hockey-stick curve of
  (q P + (1 - q) Q, Q) there; the relation is symmetric, so the PLD is that pair's PLD on
  positive losses mirrored (omega(-l) = e^-l omega(l), +inf mirrored to -inf, the rest at 0):
  a symmetric PLD whose curve bounds the release's at every eps, negative ones included.

The transforms act on the inner event's discretised PLD (a dominating pair, every hockey-stick
divergence of the transform grows with the inner ones), so the result is pessimistic; its
losses log(q e^l + 1 - q) are split onto the grid again by connect the dots. The inner event
must be a single release with a PLD (:mod:`ldpjax.accounting.pld_events`) or a composition of
Gaussian releases (its ``gdp_mu``).

Closed forms for basic composition: an eps-DP ``event`` gives log(1 + q (e^eps - 1))-DP and
(eps, delta) gives (log(1 + q (e^eps - 1)), q delta) (Balle, Barthe & Gaboardi 2018, Thm 8 and
10). ``SelfComposedEvent(PoissonSampledEvent(...), rounds)`` composes rounds through the PLD.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import protocol as p
from ldpjax.accounting.pld import (
    PldGrid,
    PrivacyLossDistribution,
    discretise_atoms,
    grid_losses,
    log1mexp,
    logaddexp,
    logsumexp,
)
from ldpjax.accounting.pld_events import gaussian_pld, release_pld
from ldpjax.types import Array, ArrayLike


def _inner_pld(event: Any, grid: PldGrid, pessimistic: bool, dtype) -> PrivacyLossDistribution:
    """The inner release's PLD on [-upper, upper] (at least): the transforms read its Q-mass,
    which sits on negative losses (Q(l < -t) <= P(l > t) for a symmetric pair), so a grid
    that holds the upper law's losses up to ``upper`` holds the lower law's down to -upper."""
    grid = PldGrid(grid.interval, min(grid.lower, -grid.upper), grid.upper)
    if hasattr(event, "sequential_parts"):
        mu = p.view(event, "gdp_mu", dtype)
        if mu is None:
            raise NotImplementedError(
                f"subsampling of {p.name_of(event)}: the sampled event must be one release or "
                "a composition of Gaussian releases")
        return gaussian_pld(mu, grid, pessimistic)
    pld = release_pld(event, grid, pessimistic, dtype)
    if pld is None:
        raise NotImplementedError(f"no privacy loss distribution for {p.name_of(event)}")
    if not pld.symmetric:
        raise NotImplementedError(f"subsampling of an asymmetric release ({p.name_of(event)})")
    return pld


def _log_q(q: Array) -> tuple[Array, Array]:
    """(log q, log(1 - q)), -inf at the ends."""
    return (jnp.where(q > 0, jnp.log(jnp.where(q > 0, q, 1.0)), -jnp.inf),
            jnp.where(q < 1, jnp.log1p(-jnp.where(q < 1, q, 0.0)), -jnp.inf))


def _remove(pld: PrivacyLossDistribution, q: Array) -> tuple[Array, Array, Array]:
    """(losses, log upper masses, log inf, log void) of the pair (q P + (1 - q) Q, Q)."""
    x = grid_losses(pld.grid, pld.log_mass.dtype, pld.pessimistic)
    lq, lr = _log_q(q)
    lq, lr = lq[..., None], lr[..., None]
    losses = logaddexp(lq + x, lr)  # log(q e^l + 1 - q)
    log_p = pld.log_mass + logaddexp(lq, lr - x)  # (q + (1 - q) e^-l) omega(l)
    losses = jnp.concatenate([losses, lr], -1)  # the lower law's own outcomes (loss log(1-q))
    log_p = jnp.concatenate([log_p, lr + pld.log_void[..., None]], -1)
    log_void = jnp.where(q >= 1, pld.log_void, -jnp.inf)
    return losses, log_p, lq[..., 0] + pld.log_inf, log_void


def _add(pld: PrivacyLossDistribution, q: Array) -> tuple[Array, Array, Array]:
    """(losses, log upper masses, log inf, log void) of the pair (Q, q P + (1 - q) Q)."""
    x = grid_losses(pld.grid, pld.log_mass.dtype, pld.pessimistic)
    lq, lr = _log_q(q)
    losses = -logaddexp(lq[..., None] + x, lr[..., None])
    log_p = pld.log_mass - x  # the Q-mass of each outcome
    losses = jnp.concatenate([losses, -lr[..., None]], -1)
    log_p = jnp.concatenate([log_p, pld.log_void[..., None]], -1)
    return losses, log_p, jnp.full_like(lq, -jnp.inf), lq + pld.log_inf


def _discretised(grid, pessimistic, losses, log_p, log_inf, log_void):
    """The atoms of a transform split onto ``grid`` (connect the dots or rounded down)."""
    log_mass, extra_inf, extra_void = discretise_atoms(grid, losses, log_p, pessimistic)
    return PrivacyLossDistribution(log_mass, logaddexp(log_inf, extra_inf),
                                   logaddexp(log_void, extra_void), grid, pessimistic)


def poisson_pld(inner: PrivacyLossDistribution, q: ArrayLike, grid: PldGrid | None = None
                ) -> PrivacyLossDistribution:
    """The (asymmetric) PLD of a release of PLD ``inner`` on a Poisson sample of rate q, on
    ``grid`` (default: the inner one).

    Example:
      >>> import math
      >>> from ldpjax.accounting.pld import PldGrid, pld_epsilon
      >>> from ldpjax.accounting.pld_events import pure_dp_pld
      >>> grid = PldGrid(2.0**-8, -4.0, 4.0)
      >>> pld = poisson_pld(pure_dp_pld(1.0, grid), 0.1)
      >>> round(math.log(1 + 0.1 * (math.e - 1)), 4), float(pld_epsilon(pld, 0.0))  # up to h
      (0.1586, 0.16015625)
    """
    return _poisson_jit(inner, jnp.asarray(q, inner.log_mass.dtype), grid or inner.grid)


def _poisson(inner: PrivacyLossDistribution, q: Array, grid: PldGrid) -> PrivacyLossDistribution:
    pess = inner.pessimistic
    remove = _discretised(grid, pess, *_remove(inner, q))
    add = _discretised(grid, pess, *_add(inner, q))
    return PrivacyLossDistribution(remove.log_mass, remove.log_inf, remove.log_void, grid, pess,
                                   add=add)


def without_replacement_pld(inner: PrivacyLossDistribution, q: ArrayLike,
                            grid: PldGrid | None = None) -> PrivacyLossDistribution:
    """The symmetric PLD of a release of symmetric PLD ``inner`` on a sample without
    replacement of a share q of the records (module docstring), on ``grid`` (default: the
    inner one).

    Example:
      >>> import math
      >>> from ldpjax.accounting.pld import PldGrid, pld_delta
      >>> from ldpjax.accounting.pld_events import gaussian_pld
      >>> grid = PldGrid(2.0**-8, -8.0, 8.0)
      >>> full, half = gaussian_pld(1.0, grid), without_replacement_pld(gaussian_pld(1.0, grid), 0.5)
      >>> round(float(pld_delta(half, math.log(1 + 0.5 * (math.e - 1)))), 4)  # q delta(1)
      0.0635
    """
    return _without_jit(inner, jnp.asarray(q, inner.log_mass.dtype), grid or inner.grid)


def _without(inner: PrivacyLossDistribution, q: Array, grid: PldGrid) -> PrivacyLossDistribution:
    pess = inner.pessimistic
    pair = _discretised(grid, pess, *_remove(inner, q))
    x = grid_losses(grid, pair.log_mass.dtype, pess)
    positive = jnp.where(x > 0, pair.log_mass, -jnp.inf)
    mirror_losses = jnp.concatenate([x, -x, jnp.zeros((1,), x.dtype)])
    used = logaddexp(logsumexp(positive), logsumexp(positive - x))
    used = logaddexp(used, pair.log_inf)
    rest = log1mexp(jnp.minimum(used, 0.0))
    log_p = jnp.concatenate([positive, positive - x, rest[..., None]], -1)
    mirror_losses = jnp.broadcast_to(mirror_losses, log_p.shape)
    return _discretised(grid, pess, mirror_losses, log_p, pair.log_inf, pair.log_inf)


_poisson_jit = jax.jit(_poisson, static_argnums=2)
_without_jit = jax.jit(_without, static_argnums=2)


def _amplified(eps: Array, q: Array) -> Array:
    """log(1 + q (e^eps - 1)), inf for eps = inf and q > 0."""
    finite = eps < jnp.inf
    out = jnp.log1p(q * jnp.expm1(jnp.where(finite, eps, 0.0)))
    return jnp.where(finite, out, jnp.where(q > 0, jnp.inf, 0.0))


class _Sampled:
    """Views shared by the two sampled events (``_q`` gives the sampling share)."""

    def pure_eps(self, dtype) -> Array | None:
        eps = p.view(self.event, "pure_eps", dtype)
        return None if eps is None else _amplified(jnp.asarray(eps, dtype), self._q(dtype))

    def approx_dp(self, dtype) -> tuple[Array, Array] | None:
        pair = p.approx_view(self.event, dtype)
        if pair is None:
            return None
        q = self._q(dtype)
        return _amplified(jnp.asarray(pair[0], dtype), q), q * jnp.asarray(pair[1], dtype)


class PoissonSampledEvent(NamedTuple):
    """``event`` run on a Poisson sample: each record enters with ``probability`` q in [0, 1];
    the claim is for adding or removing one record (module docstring).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> from ldpjax.accounting.events import LaplaceEvent
      >>> round(float(epsilon(PoissonSampledEvent(LaplaceEvent(1.0), 0.1), 0.0)), 4)
      0.1586
    """

    event: Any
    probability: ArrayLike

    def check(self, where: str) -> None:
        p.check(self.event, f"{where}event.")
        v.check_range(f"{where}probability", self.probability, 0.0, 1.0)

    def valid(self) -> Array:
        q = jnp.asarray(self.probability)
        return p.valid(self.event) & (q >= 0) & (q <= 1)

    def prepared(self) -> PoissonSampledEvent:
        return PoissonSampledEvent(p.prepared(self.event), p.budget_array(self.probability))

    def ties(self) -> list[Array]:
        return [*p.ties(self.event), self.probability]

    def _q(self, dtype) -> Array:
        return jnp.asarray(self.probability, dtype)

    pure_eps = _Sampled.pure_eps
    approx_dp = _Sampled.approx_dp

    def privacy_loss(self, grid: PldGrid, pessimistic: bool = True) -> PrivacyLossDistribution:
        dtype = p.dtype_of(self)
        return poisson_pld(_inner_pld(self.event, grid, pessimistic, dtype), self._q(dtype), grid)


class SampledWithoutReplacementEvent(NamedTuple):
    """``event`` run on ``sample_size`` m distinct records drawn from ``population_size`` n
    (integers, 0 <= m <= n, n >= 1); the claim is for replacing one record (module docstring).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> from ldpjax.accounting.events import LaplaceEvent
      >>> round(float(epsilon(SampledWithoutReplacementEvent(LaplaceEvent(1.0), 10, 100), 0.0)), 4)
      0.1586
    """

    event: Any
    sample_size: ArrayLike
    population_size: ArrayLike

    def check(self, where: str) -> None:
        p.check(self.event, f"{where}event.")
        v.check_integer(f"{where}population_size", self.population_size, 1)
        v.check_integer(f"{where}sample_size", self.sample_size, 0)
        if v.is_concrete((self.sample_size, self.population_size)):
            m = jnp.asarray(self.sample_size)
            n = jnp.asarray(self.population_size)
            if bool(jnp.any(m > n)):
                raise ValueError(f"{where}sample_size must be in [0, population_size]; got "
                                 f"{self.sample_size!r} of {self.population_size!r}")

    def valid(self) -> Array:
        m, n = jnp.asarray(self.sample_size), jnp.asarray(self.population_size)
        ints = (m == jnp.round(m)) & (n == jnp.round(n))
        return p.valid(self.event) & ints & (m >= 0) & (n >= 1) & (m <= n)

    def prepared(self) -> SampledWithoutReplacementEvent:
        return SampledWithoutReplacementEvent(p.prepared(self.event), p.array(self.sample_size),
                                              p.array(self.population_size))

    def ties(self) -> list[Array]:
        return [*p.ties(self.event), self.sample_size, self.population_size]

    def _q(self, dtype) -> Array:
        n = jnp.asarray(self.population_size, dtype)
        return jnp.asarray(self.sample_size, dtype) / jnp.where(n > 0, n, 1.0)

    pure_eps = _Sampled.pure_eps
    approx_dp = _Sampled.approx_dp

    def privacy_loss(self, grid: PldGrid, pessimistic: bool = True) -> PrivacyLossDistribution:
        dtype = p.dtype_of(self)
        inner = _inner_pld(self.event, grid, pessimistic, dtype)
        return without_replacement_pld(inner, self._q(dtype), grid)


__all__ = [
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "poisson_pld",
    "without_replacement_pld",
]
