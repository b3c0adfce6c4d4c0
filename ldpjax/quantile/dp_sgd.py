"""DP-SGD baseline: Local SGD with a noisy bounded subgradient.

A baseline of "Federated Learning of Quantile Inference under Local Differential Privacy"
(ICLR 2026), Sec. 4.

Same rounds, schedules, learning rates, Polyak-Ruppert estimate and self-normalised CI as
:mod:`ldpjax.quantile.local_sgd`; only the local step differs. Client k computes the check-loss
subgradient g = 1{x <= q} - tau in {-tau, 1 - tau} (replace-one sensitivity exactly 1 in l1
and l2, a property of the bit, so it is not a tunable) and releases it with noise; the update
is q <- q - lr g~ (expectation lr (tau - F_k(q))).

Calibration (``calibration=``, static):

* ``"laplace"`` (default): pure eps_k-LDP Laplace noise, eps_k = ``rr_epsilon(r_k)`` — the same
  budget as randomized response at rate r_k — through :func:`ldpjax.mechanisms.laplace_mechanism`
  (scale 1 / eps_k, noise sd sqrt(2) / eps_k). This is the comparison the paper makes: its
  DP-SGD MAEs fit this noise (Theorem 3.1 predicts 0.0132 / 0.0169 / 0.0067 against the paper's
  0.0142 / 0.0186 / 0.0065 in the Hete-L cells); the authors' public code has no DP-SGD to
  settle it. Claim: ``LaplaceEvent(eps_k)`` per client (the continuous Laplace mechanism,
  accounted by its own profile, below the worst eps_k-DP pair's).
* ``"gaussian"``: the Gaussian mechanism through :func:`ldpjax.mechanisms.gaussian_mechanism`
  (sensitivity 1, GDP parameter mu_k, noise sd 1 / mu_k). mu_k = ``ldpjax.accounting.gdp_mu(eps_k,
  delta)`` with eps_k = ``rr_epsilon(r_k)`` and delta = 1e-5 by default (``QuantileParams.delta``):
the mu_k-GDP Gaussian mechanism is exactly (eps_k, delta)-DP, i.e. it meets the same eps_k as
randomized response at rate r_k, with an extra delta (a slightly weaker guarantee than pure
eps_k-LDP, which favours the baseline). r_k = 1 means no privacy for client k (mu_k = inf, no
noise), as for randomized response. The calibration (a root solve) runs once per run, in
``init``; the state keeps mu_k for the steps.

Privacy claim (``privacy_event``): each record is used once, by its own client, in one release
(records clients: see Data below), so ``ParallelEvent(LaplaceEvent(eps_k) for k)`` (Laplace) or
``ParallelEvent(GaussianEvent(mu_k) for k)`` (Gaussian; per record mu_k-GDP, hence
(eps_k, delta)-DP). With ``granularity=g`` the releases take the float-safe granular path
(rounded to g Z plus an exact discrete Laplace or Gaussian) and the claim is the mechanism's
own (``ldpjax.mechanisms.laplace_claim``: ``PureDpEvent(D / t)``, the discrete Laplace's
worst pair; ``granular_claim``: a ``DiscreteGaussianEvent``).
**Which release is safe for real data:** only the granular one. The default float path is for
simulation: its low-order bits depend on the subgradient (Mironov 2012; see
``ldpjax.mechanisms.gaussian``). The exact discrete-Gaussian accountant covers the window
12 s + D <= 4096, with s = sigma_k / g and D = 1/g + 1 the rounded sensitivity in grid units
(s <= 338 at g = 2**-5, which holds for r_k >= 0.25 at delta = 1e-5); beyond it ``epsilon`` of
the claim is the zCDP bound (CKS 2020, Thm 14 and Cor. 13), finite and an upper bound but
looser: at r_k = 0.25 and delta = 1e-5 the claim's epsilon at 1e-5 is 0.511 with g = 2**-5
(exact; mu_k-GDP gives 0.511) and 0.561 with g = 2**-7 (zCDP). A granularity too fine for the
exact samplers (a Laplace grid scale D / eps_k above
``ldpjax.mechanisms.laplace.MAX_GRID_SCALE``, or a Gaussian s above ``MAX_GRID_SIGMA``) is a
``ValueError`` at validation, naming a coarser power of two (e.g. r_k = 0.1 needs
g >= 2**-11 with the Laplace calibration).

Data: with ``config.exact_law`` (default) and parametric clients, the bit 1{x <= q} is drawn
from its law, 1{u < F_k(q)} (one data uniform, no inverse CDF); otherwise x = F_k^-1(u).
Records clients read their records without replacement (:mod:`ldpjax.quantile.record_stream`):
t_T above a client's n_k records is a ``ValueError`` unless it opts into reuse
(``record_clients(..., max_uses=m)``); then each record enters m_k = ceil(t_T / n_k) Gaussian
releases and the claim composes them: ``ComposedEvent`` of m_k ``GaussianEvent(mu_k)``
(exact: mu_k sqrt(m_k)-GDP), or of m_k discrete-Gaussian events on the granular path
(``ldpjax.accounting.epsilon`` takes the tighter of zCDP, which adds, and the privacy loss
distribution of the composition: at r_k = 0.25, g = 2**-7, delta = 1e-5 and m_k = 3 it is 0.931,
the mu_k sqrt(3)-GDP value to 1e-3, where zCDP gives 1.018). Parametric clients draw fresh
records.

Fail closed: traced invalid r or delta make mu_k NaN, so every release and the estimate are NaN.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

import ldpjax.accounting as acc
from ldpjax import _validation as v
from ldpjax import mechanisms
from ldpjax.accounting import gdp_mu, rr_epsilon
from ldpjax.engine import ELEMENTAL_EMITTERS, Algorithm, ExecutionHints
from ldpjax.mechanisms.gaussian import check_grid_sigma
from ldpjax.mechanisms.laplace import check_grid_scale, granular_laplace_scale
from ldpjax.quantile.clients import client_cdf, sample_from_uniform, uniform_draws
from ldpjax.quantile.inference import InferenceState
from ldpjax.quantile.local_sgd import LocalSGDConfig
from ldpjax.quantile.params import QuantileParams
from ldpjax.quantile.record_stream import (
    check_stream,
    fail_closed,
    per_client_claim,
    stream_caps,
    stream_records,
)
from ldpjax.quantile.rounds import (
    federated_finish,
    federated_init,
    masked_local_steps,
    privacy_keys,
    round_clock,
    round_start,
    split_round_key,
    stream_contract,
    uses_exact_law,
)
from ldpjax.types import Array, ArrayLike

#: The execution hints to simulate :func:`dp_sgd` with (``simulate(..., hints=DP_SGD_HINTS)``):
#: XLA CPU's elemental emitters compile its kernels faster at the same speed (measured in
#: ``docs/pages/engine.md``, "Compile options"); the records can differ in the last bits, not
#: in law.
DP_SGD_HINTS = ExecutionHints(cpu_compiler_options=ELEMENTAL_EMITTERS)

SENSITIVITY = 1.0  # replace-one l1 = l2 sensitivity of g = 1{x <= q} - tau in {-tau, 1 - tau}
CALIBRATIONS = ("laplace", "gaussian")


class DPSGDState(NamedTuple):
    """State between rounds of DP-SGD.

    Attributes:
      iterate: the shared iterate after the last aggregation.
      round: number of completed rounds.
      stats: online inference sums.
      mu: (K,) calibrated budgets, computed once in ``init``: eps_k (Laplace calibration) or the
        GDP parameters mu_k (Gaussian calibration).
      order: uint32 (2,) seed of the run's record order (records clients; zeros otherwise).
    """

    iterate: Array
    round: Array
    stats: InferenceState
    mu: Array
    order: Array


def dp_sgd_mu(r: ArrayLike, delta: ArrayLike) -> Array:
    """mu_k = gdp_mu(rr_epsilon(r_k), delta): the Gaussian mechanism that is (eps_k, delta)-DP.

    ``inf`` for r_k = 1 (no privacy, as for randomized response); NaN under ``jit`` for r
    outside (0, 1] or delta outside (0, 1).

    Example:
      >>> round(float(dp_sgd_mu(0.5, 1e-5)), 3) > 0
      True
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    v.check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    dtype = jnp.result_type(r, delta, float)
    r, delta = jnp.asarray(r, dtype), jnp.asarray(delta, dtype)
    valid = (r > 0) & (r <= 1) & (delta > 0) & (delta < 1)
    private = valid & (r < 1)
    eps = rr_epsilon(jnp.where(private, r, 0.5))
    safe_delta = jnp.broadcast_to(jnp.where(valid, delta, 0.5), eps.shape)
    mu = gdp_mu(jnp.minimum(eps, 1e3), safe_delta)
    return v.valid_or_nan(valid, jnp.where(private, mu, jnp.inf))


def gaussian_noise_scales(r: ArrayLike, delta: ArrayLike) -> Array:
    """sd of the Gaussian noise on the subgradient: ``mechanisms.gaussian_noise_scale(1, mu_k)``.

    0 for r_k = 1 (mu_k = inf); see :func:`dp_sgd_mu`.
    """
    return mechanisms.gaussian_noise_scale(SENSITIVITY, dp_sgd_mu(r, delta))


def _check_granular(budget: Array, granularity: float, laplace: bool, r: ArrayLike) -> None:
    """``ValueError`` (naming r) where a granular release at ``budget`` is beyond its sampler."""
    if not v.is_concrete(budget):
        return
    try:
        if laplace:
            _, scale = granular_laplace_scale(SENSITIVITY, budget, granularity, 1)
            check_grid_scale(scale, granularity)
        else:
            sens = mechanisms.rounded_sensitivity(SENSITIVITY, granularity, 1)
            check_grid_sigma(mechanisms.gaussian_noise_scale(sens, budget) / granularity, sens,
                             granularity)
    except ValueError as err:
        low = float(np.min(np.asarray(r, np.float64)))
        raise ValueError(f"dp_sgd(granularity={granularity!r}) at params.r down to {low:.4g}: "
                         f"{err}") from None


def laplace_budgets(r: ArrayLike) -> Array:
    """eps_k = rr_epsilon(r_k): the Laplace calibration's budget (inf for r_k = 1).

    Example:
      >>> round(float(laplace_budgets(0.5)), 4)  # log 3
      1.0986
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    return rr_epsilon(r)


@functools.cache
def dp_sgd(config: LocalSGDConfig, *, granularity: float | None = None,
           calibration: str = "laplace") -> Algorithm:
    """The noisy-subgradient Local SGD baseline for ``config`` (cached).

    Args:
      config: rounds and budget (:class:`~ldpjax.quantile.LocalSGDConfig`).
      granularity: None (float path: simulation only) or a power of two g such as 2**-10 (the
        granular path: use it for real data).
      calibration: ``"laplace"`` (default: pure eps_k-LDP, as the paper compares) or
        ``"gaussian"`` (mu_k-GDP at (eps_k, delta)).

    Example:
      >>> import ldpjax.quantile as Q
      >>> from ldpjax.engine import make_key, rollout
      >>> config = Q.LocalSGDConfig(budget=20, schedule=Q.C5)
      >>> params = Q.quantile_params(0.5, 0.9, Q.make_clients("normal", loc=[0.0, 0.0]))
      >>> _, final = rollout(Q.dp_sgd(config), params, make_key(0), config.num_rounds)
      >>> int(final.samples), bool(jnp.isfinite(final.estimate))
      (20, True)
    """
    if not isinstance(config, LocalSGDConfig):
        raise ValueError(f"config must be a LocalSGDConfig; got {config!r}")
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}; got {calibration!r}")
    if granularity is not None:
        mechanisms.rounded_sensitivity(SENSITIVITY, granularity, 1)  # validates the power of two
    laplace = calibration == "laplace"

    def budgets(params: QuantileParams) -> Array:
        return laplace_budgets(params.r) if laplace else dp_sgd_mu(params.r, params.delta)

    def release(key, subgradient, budget):
        if laplace:
            return mechanisms.laplace_mechanism(key, subgradient, SENSITIVITY, budget,
                                                granularity=granularity)
        return mechanisms.gaussian_mechanism(key, subgradient, SENSITIVITY, budget,
                                             granularity=granularity)
    table = np.asarray(config.local_steps, dtype=np.int32)
    max_steps = int(table.max())
    reports = int(table.sum())  # per client

    def event_of(params: QuantileParams, uses):
        budget = budgets(params)
        if laplace:
            parts = tuple(mechanisms.laplace_claim(SENSITIVITY, budget[..., i], granularity, 1)
                          for i in range(budget.shape[-1]))
        elif granularity is None:
            parts = tuple(acc.GaussianEvent(budget[..., i]) for i in range(budget.shape[-1]))
        else:
            parts = tuple(mechanisms.granular_claim(SENSITIVITY, budget[..., i], granularity, 1)
                          for i in range(budget.shape[-1]))
        return per_client_claim(parts, uses)

    stream_validate, privacy_event = stream_contract(reports, event_of)

    def validate(params: QuantileParams, inputs=None) -> None:
        stream_validate(params, inputs)
        if granularity is not None:  # the exact samplers' range, before anything compiles
            _check_granular(budgets(params), granularity, laplace, params.r)

    def init(params: QuantileParams, key) -> DPSGDState:
        check_stream(params.clients, reports)  # static: records clients vs the budget
        base = federated_init(params, key)
        budget = budgets(params).astype(base.iterate.dtype)
        return DPSGDState(base.iterate, base.round, base.stats, budget, base.order)

    def step(params: QuantileParams, state: DPSGDState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        local_steps, step_lr = round_clock(table, state.round, params, dtype)
        data_key, privacy_key = split_round_key(key)
        keys = privacy_keys(privacy_key, max_steps)
        exact = uses_exact_law(config.exact_law, params)
        records = params.clients.records is not None
        if records:  # the next records of each client's stream, without replacement
            position = round_start(table, state.round) + jnp.arange(max_steps, dtype=jnp.int32)[:, None]
            x = stream_records(params.clients, state.order, position, caps=stream_caps(params.clients, reports), dtype=dtype)
        else:
            data_u = uniform_draws(data_key, (max_steps, k), dtype)

        def update(j, q):
            if records:
                below = x[j] <= q
            elif exact:
                below = data_u[j] < client_cdf(params.clients, q)  # 1{x <= q} from its law
            else:
                below = sample_from_uniform(params.clients, data_u[j]) <= q
            subgradient = below.astype(dtype) - params.tau
            noisy = release(keys[j], subgradient, state.mu)
            return q - step_lr * (fail_closed(noisy, x[j]) if records else noisy)

        q = masked_local_steps(update, jnp.broadcast_to(state.iterate, (k,)), max_steps, local_steps)
        return federated_finish(params, state, q, local_steps)

    # run it with DP_SGD_HINTS (XLA CPU's elemental emitters)
    return Algorithm(init, step, validate=validate, privacy_event=privacy_event)


__all__ = ["CALIBRATIONS", "DPSGDState", "DP_SGD_HINTS", "SENSITIVITY", "dp_sgd", "dp_sgd_mu",
           "gaussian_noise_scales", "laplace_budgets"]
