"""DP-SGD baseline: Local SGD with a Gaussian mechanism on the bounded subgradient (paper 001, Sec. 4).

Same rounds, schedules, learning rates, Polyak-Ruppert estimate and self-normalised CI as
:mod:`ldpjax.quantile.local_sgd`; only the local step differs. Client k computes the check-loss
subgradient g = 1{x <= q} - tau in {-tau, 1 - tau} (replace-one sensitivity 1) and releases
g~ = g + N(0, sigma_k^2); the update is q <- q - lr g~ (expectation lr (tau - F_k(q))).

Calibration (the paper does not say; our choice): sigma_k = 1 / mu_k with
mu_k = ``ldpjax.accounting.gdp_mu(eps_k, delta)``, eps_k = ``rr_epsilon(r_k)`` and delta = 1e-5
by default (``QuantileParams.delta``): the mu_k-GDP Gaussian mechanism is exactly
(eps_k, delta)-DP, i.e. it meets the same eps_k as randomized response at rate r_k, with an
extra delta (a slightly weaker guarantee than pure eps_k-LDP, which favours the baseline).
r_k = 1 means no noise. Each record is used once, so client k is (eps_k, delta)-LDP.
"""

from __future__ import annotations

import functools

from ldpjax.engine import Algorithm
from ldpjax.quantile._core import _CoreSpec, gaussian_noise_scales, rounds_algorithm
from ldpjax.quantile.local_sgd import LocalSGDConfig


@functools.cache
def dp_sgd(config: LocalSGDConfig) -> Algorithm:
    """The Gaussian-mechanism Local SGD baseline for ``config`` (cached)."""
    if not isinstance(config, LocalSGDConfig):
        raise ValueError(f"config must be a LocalSGDConfig; got {config!r}")
    return rounds_algorithm(_CoreSpec(config.local_steps, "gaussian", aggregate=True))


__all__ = ["dp_sgd", "gaussian_noise_scales"]
