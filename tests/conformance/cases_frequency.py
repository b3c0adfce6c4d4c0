"""Conformance cases of the online frequency-estimation family (:mod:`ldpjax.frequency.online`).

Three oracles whose steps differ the most: K-ary RR with the domain size as a traced number of
categories (reports path; the conformance suite's case), and (``slow_cases``, run by a slow test
of tests/frequency/test_online.py) local hashing with public seeds and traced buckets (reports
path) and OUE on the counts path (binomial support counts).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax.frequency.online import FrequencyParams, OnlineFrequencyConfig, online_frequency
from tests.conformance.case import ConformanceCase

_MAX_ITEMS = 16


def _case(oracle: str, path: str) -> ConformanceCase:
    config = OnlineFrequencyConfig(max_items=_MAX_ITEMS, oracle=oracle, users=64, path=path,
                                   block=32)
    return ConformanceCase(
        name=f"frequency/online_{oracle}_{path}",
        algorithm=online_frequency(config),
        make_params=lambda eps: FrequencyParams(jnp.asarray(eps, jnp.float32), jnp.int32(8),
                                                jnp.ones(_MAX_ITEMS, jnp.float32)),
        budgets=(0.5, 2.0),
        invalid_budgets=(float("nan"), -1.0, 0.0, float("-inf")),
        num_steps=3,
        # squared error of the final estimate: differentiable in eps through (p*, q*)
        scalar=lambda state, outputs: outputs.squared_error[-1],
        is_closed=lambda state, outputs: jnp.all(jnp.isnan(outputs.estimate)),
        inputs=jnp.tile(jnp.arange(64, dtype=jnp.int32) % 8, (3, 1)),
        bad_inputs=jnp.full((3, 64), 9, jnp.int32),  # items outside [0, d = 8)
    )


def cases() -> list[ConformanceCase]:
    """The fast suite's case (K-ary RR: the traced domain size as its number of categories)."""
    return [_case("grr", "reports")]


def slow_cases() -> list[ConformanceCase]:
    """The other two, checked by ``tests/frequency/test_online.py::test_more_oracles_conform``
    (``@pytest.mark.slow``: about 6 s each on 2 cores)."""
    return [_case("olh", "reports"), _case("oue", "counts")]
