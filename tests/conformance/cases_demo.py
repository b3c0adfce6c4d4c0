"""Conformance case of the demo algorithm (the noisy counter)."""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax.demo.noisy_counter import CounterParams, noisy_counter
from tests.conformance.case import ConformanceCase


def cases() -> list[ConformanceCase]:
    return [
        ConformanceCase(
            name="demo/noisy_counter",
            algorithm=noisy_counter(),
            make_params=lambda mu: CounterParams(jnp.asarray(mu, jnp.float32), jnp.float32(0.5)),
            budgets=(0.5, 2.0),
            invalid_budgets=(float("nan"), -1.0, 0.0, float("-inf")),
            num_steps=8,
            # squared error of the final count: E = T / mu^2, differentiable in mu
            scalar=lambda state, outputs: outputs.squared_error[-1],
            is_closed=lambda state, outputs: jnp.all(jnp.isnan(outputs.error)),
        )
    ]
