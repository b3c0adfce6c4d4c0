"""Shared machinery of the round-based quantile algorithms (Local SGD, DP-SGD, DC).

Not public: each algorithm module (``local_sgd``, ``dp_sgd``, ``divide_and_conquer``) documents
its own update and builds its engine ``Algorithm`` from :func:`rounds_algorithm`.

One engine step is one communication round m (0-based in the state, 1-based in formulas). The
round's E_m comes from a static table; the inner loop runs E_max = max_m E_m local steps and
masks the ones beyond E_m, so shapes are static and the whole run is one ``lax.scan`` (the
waste is sum_m (E_max - E_m), about 10% for the Log schedule, nothing for constant schedules).
All random numbers of a round come from the engine's round key in one call.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import gdp_mu, rr_epsilon
from ldpjax.engine import Algorithm
from ldpjax.quantile.clients import Clients, check_weights, sample_from_uniform
from ldpjax.quantile.inference import (
    InferenceState,
    inference_init,
    inference_update,
    inference_variance,
)
from ldpjax.quantile.mechanism import debiased_increment, report_from_uniform
from ldpjax.quantile.schedules import DEFAULT_LR, check_learning_rate, learning_rate
from ldpjax.types import Array, ArrayLike


@dataclasses.dataclass(frozen=True)
class PerClientBudget:
    """Static configuration shared by the one-sample-per-round methods (DC, Single):
    ``budget`` = t_T samples per client (integer >= 1), one round per sample."""

    budget: int

    def __post_init__(self):
        v.check_integer("budget (t_T, samples per client)", self.budget, 1)

    @property
    def num_rounds(self) -> int:
        return int(self.budget)



class QuantileParams(NamedTuple):
    """Numeric parameters shared by every quantile algorithm (array leaves: vmap/grad-able).

    Attributes:
      tau: quantile level in (0, 1).
      r: (K,) truthful-response rates in (0, 1] (client k is eps_k-LDP,
        eps_k = log((1 + r_k) / (1 - r_k))).
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
    """
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


def params_valid(params: QuantileParams) -> Array:
    """Traced-value domain check (the NaN policy under jit)."""
    ok = (params.tau > 0) & (params.tau < 1)
    ok &= jnp.all((params.r > 0) & (params.r <= 1))
    ok &= jnp.all(params.weights >= 0) & (jnp.abs(jnp.sum(params.weights) - 1.0) < 1e-4)
    ok &= (params.lr_scale > 0) & (params.lr_power > 0.5) & (params.lr_power <= 1)
    ok &= params.lr_offset >= 0
    return ok


class RoundState(NamedTuple):
    """State between rounds.

    Attributes:
      iterate: (K,) client iterates after the last round (all equal after an aggregation).
      round: number of completed rounds.
      stats: online inference sums (scalar leaves for the federated estimate; (K,) for DC).
      noise_scale: (K,) Gaussian noise sd of the DP-SGD baseline (zeros otherwise).
    """

    iterate: Array
    round: Array
    stats: InferenceState
    noise_scale: Array


class RoundOutputs(NamedTuple):
    """Per-round outputs (reduce them with an ``ldpjax.engine.record`` recorder).

    Attributes:
      iterate: the aggregated iterate sum_k p_k q_k after the round.
      estimate: the Polyak-Ruppert estimate so far.
      variance: V_n so far (CI: estimate +- z sqrt(variance)).
      samples: samples per client used so far.
    """

    iterate: Array
    estimate: Array
    variance: Array
    samples: Array


@dataclasses.dataclass(frozen=True)
class _CoreSpec:
    local_steps: tuple[int, ...]  # E_m per round (static table)
    mechanism: str  # "rr" or "gaussian"
    aggregate: bool  # True: federated averaging each round; False: DC (no communication)


def gaussian_noise_scales(r: Array, delta: Array) -> Array:
    """sd of the Gaussian mechanism on the check-loss subgradient (sensitivity 1) matching eps_k.

    sigma_k = 1 / mu_k with mu_k = gdp_mu(rr_epsilon(r_k), delta): the mu-GDP Gaussian mechanism
    whose privacy profile passes through (eps_k, delta), i.e. it is (eps_k, delta)-DP for the
    eps_k of randomized response at rate r_k. r_k = 1 (eps = inf) means no noise.
    """
    private = r < 1
    safe_r = jnp.where(private, r, 0.5)
    eps = rr_epsilon(safe_r)
    mu = gdp_mu(jnp.minimum(eps, 1e3), jnp.broadcast_to(delta, eps.shape))
    return jnp.where(private, 1.0 / mu, 0.0)


def rounds_algorithm(spec: _CoreSpec) -> Algorithm:
    """Build the engine algorithm for one static spec (callers cache it)."""
    table = np.asarray(spec.local_steps, dtype=np.int32)
    max_steps = int(table.max())
    num_rounds = table.size

    def init(params: QuantileParams, key) -> RoundState:
        k = params.r.shape[-1]
        dtype = params.init.dtype
        start = v.valid_or_nan(params_valid(params), params.init)
        iterate = jnp.full((k,), start, dtype)
        stats = inference_init(() if spec.aggregate else (k,), dtype)
        if spec.mechanism == "gaussian":
            noise = gaussian_noise_scales(params.r, params.delta).astype(dtype)
        else:
            noise = jnp.zeros((k,), dtype)
        return RoundState(iterate, jnp.zeros((), jnp.int32), stats, noise)

    def step(params: QuantileParams, state: RoundState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        m = jnp.minimum(state.round, num_rounds - 1)
        local_steps = jnp.asarray(table)[m]
        round_lr = learning_rate(m + 1, params.lr_scale, params.lr_power, params.lr_offset)
        step_lr = round_lr / local_steps.astype(dtype)
        draws = jax.random.uniform(key, (max_steps, 2, k), dtype)
        if spec.mechanism == "gaussian":
            noise = jax.random.normal(jax.random.fold_in(key, 1), (max_steps, k), dtype)

        def local(j, q):
            x = sample_from_uniform(params.clients, draws[j, 0])
            if spec.mechanism == "rr":
                report = report_from_uniform(draws[j, 1], x > q, params.r)
                increment = debiased_increment(report, params.tau, params.r)
            else:
                subgradient = (x <= q).astype(dtype) - params.tau
                increment = -(subgradient + state.noise_scale * noise[j])
            return jnp.where(j < local_steps, q + step_lr * increment, q)

        q = jax.lax.fori_loop(0, max_steps, local, state.iterate)
        aggregated = jnp.sum(params.weights * q)
        weight = local_steps.astype(dtype)
        if spec.aggregate:
            q = jnp.full((k,), aggregated, dtype)
            stats = inference_update(state.stats, aggregated, weight)
            estimate = stats.mean
            variance = inference_variance(stats)
        else:
            stats = inference_update(state.stats, q, weight)
            estimate = jnp.sum(params.weights * stats.mean)
            variance = jnp.sum(params.weights * inference_variance(stats))
        new_state = RoundState(q, state.round + 1, stats, state.noise_scale)
        return new_state, RoundOutputs(aggregated, estimate, variance, stats.samples.reshape(-1)[0])

    return Algorithm(init, step)


__all__ = ["QuantileParams", "RoundOutputs", "RoundState", "quantile_params"]
