"""Conformance cases of the quantile family: Local SGD, DP-SGD, DC and Single (paper 001).

Budget = ``r`` (the truthful-response rate every client shares; DP-SGD is calibrated to the same
eps_k = rr_epsilon(r) at delta = 1e-5). Tiny sizes: K = 3 clients, T = 16 engine steps.
A run whose traced budget is invalid fails closed when its final estimate is NaN.
"""

from __future__ import annotations

import jax.numpy as jnp

import ldpjax.quantile as Q
from tests.conformance.case import ConformanceCase

NUM_CLIENTS = 3
NUM_STEPS = 16
BUDGETS = (0.5, 0.9)
INVALID_BUDGETS = (float("nan"), -0.5, 1.5, 0.0)


def _base() -> Q.QuantileParams:
    clients = Q.make_clients(("normal", "laplace", "uniform"), loc=[-0.5, 0.0, 0.5])
    return Q.quantile_params(0.4, 0.5, clients, weights=[0.5, 0.3, 0.2])


def _make_params(budget):
    # No validation here (traceable, and concrete invalid budgets must reach ``validate``).
    base = _base()
    r = jnp.broadcast_to(jnp.asarray(budget, base.r.dtype), (NUM_CLIENTS,))
    return base._replace(r=r)


def _final_estimate(final_state, outputs):
    return outputs.estimate[-1]


def _estimate_is_nan(final_state, outputs):
    return jnp.isnan(outputs.estimate[-1])


def _case(name, algorithm) -> ConformanceCase:
    return ConformanceCase(
        name=f"quantile/{name}",
        algorithm=algorithm,
        make_params=_make_params,
        budgets=BUDGETS,
        invalid_budgets=INVALID_BUDGETS,
        num_steps=NUM_STEPS,
        scalar=_final_estimate,
        is_closed=_estimate_is_nan,
        inputs=None,
        bad_inputs=None,
        differentiable=True,
    )


def cases() -> list[ConformanceCase]:
    local = Q.LocalSGDConfig(NUM_STEPS, Q.C1)
    sampling = Q.LocalSGDConfig(NUM_STEPS, Q.C1, exact_law=False)
    return [
        _case("local_sgd", Q.local_sgd(local)),
        _case("local_sgd_sampling", Q.local_sgd(sampling)),
        _case("dp_sgd", Q.dp_sgd(local)),
        _case("dp_sgd_gaussian", Q.dp_sgd(local, calibration="gaussian")),
        _case("divide_and_conquer", Q.divide_and_conquer(Q.DivideAndConquerConfig(NUM_STEPS))),
        _case("single", Q.single(Q.SingleConfig(NUM_STEPS))),
    ]
