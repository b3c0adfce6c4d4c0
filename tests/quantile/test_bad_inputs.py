"""Bad inputs to the quantile public API: each raises ValueError/TypeError naming the argument.

Concrete out-of-domain values must be refused at the Python boundary (never reach the
compiled code, never run without privacy); traced ones fail closed (see the last tests).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.quantile as Q
from ldpjax.engine import make_key, rollout, simulate

CLIENTS = Q.make_clients("normal", loc=[0.0, 1.0])
PARAMS = Q.quantile_params(0.5, 0.5, CLIENTS)
CONFIG = Q.LocalSGDConfig(10, Q.C1)
NAN = float("nan")


def _params(**changes):
    return PARAMS._replace(**{k: jnp.asarray(v, jnp.float32) for k, v in changes.items()})


def _validate(**changes):
    Q.local_sgd(CONFIG).validate(_params(**changes), None)


CASES = [
    # quantile_params
    ("tau_zero", lambda: Q.quantile_params(0.0, 0.5, CLIENTS), ValueError, r"tau must be in \(0, 1\)"),
    ("tau_one", lambda: Q.quantile_params(1.0, 0.5, CLIENTS), ValueError, r"tau must be in \(0, 1\)"),
    ("tau_nan", lambda: Q.quantile_params(NAN, 0.5, CLIENTS), ValueError, r"tau must be in"),
    ("r_zero", lambda: Q.quantile_params(0.5, 0.0, CLIENTS), ValueError, r"r must be in \(0, 1\]"),
    ("r_above_one", lambda: Q.quantile_params(0.5, 1.5, CLIENTS), ValueError, r"r must be in \(0, 1\]"),
    ("r_negative", lambda: Q.quantile_params(0.5, -0.5, CLIENTS), ValueError, r"r must be in \(0, 1\]"),
    ("r_nan", lambda: Q.quantile_params(0.5, [0.5, NAN], CLIENTS), ValueError, r"r must be in \(0, 1\]"),
    ("r_wrong_length", lambda: Q.quantile_params(0.5, [0.5, 0.6, 0.7], CLIENTS), ValueError, "one entry per client"),
    ("weights_sum", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, [0.6, 0.6]), ValueError, "weights must be"),
    ("weights_negative", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, [-0.5, 1.5]), ValueError, "weights must be"),
    ("weights_length", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, [0.2, 0.3, 0.5]), ValueError, "weights must have one entry"),
    ("lr_scale_negative", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, lr_scale=-1.0), ValueError, "lr_scale must be"),
    ("lr_scale_zero", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, lr_scale=0.0), ValueError, "lr_scale must be"),
    ("lr_power_half", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, lr_power=0.5), ValueError, "lr_power must be"),
    ("lr_power_big", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, lr_power=1.5), ValueError, "lr_power must be"),
    ("lr_offset_negative", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, lr_offset=-1.0), ValueError, "lr_offset must be"),
    ("init_inf", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, init=np.inf), ValueError, "init must be"),
    ("delta_zero", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, delta=0.0), ValueError, "delta must be"),
    ("delta_one", lambda: Q.quantile_params(0.5, 0.5, CLIENTS, delta=1.0), ValueError, "delta must be"),
    ("clients_not_clients", lambda: Q.quantile_params(0.5, 0.5, "normal"), TypeError, "clients must be"),
    # clients
    ("family_unknown", lambda: Q.make_clients("gamma"), ValueError, "families must be"),
    ("scale_zero", lambda: Q.make_clients("normal", scale=0.0), ValueError, "scale must be"),
    ("clients_sizes", lambda: Q.make_clients(("normal", "cauchy"), loc=[0.0, 1.0, 2.0]), ValueError, "same number of clients"),
    ("records_empty", lambda: Q.record_clients([np.array([1.0]), np.array([])]), ValueError, r"records\[1\]"),
    ("records_nan", lambda: Q.record_clients([np.array([1.0, NAN])]), ValueError, r"records\[0\]"),
    ("pdf_records", lambda: Q.pdf(Q.record_clients([np.arange(3.0)]), 0.0), ValueError, "parametric"),
    ("global_quantile_tau", lambda: Q.global_quantile(2.0, CLIENTS), ValueError, "tau must be"),
    # configs and factories
    ("budget_short", lambda: Q.LocalSGDConfig(4, Q.C5), ValueError, r"budget \(t_T"),
    ("schedule_string", lambda: Q.LocalSGDConfig(10, "C1"), ValueError, "schedule must be"),
    ("exact_law_string", lambda: Q.LocalSGDConfig(10, Q.C1, exact_law="yes"), TypeError, "exact_law"),
    ("dc_budget_zero", lambda: Q.DivideAndConquerConfig(0), ValueError, "budget"),
    ("single_budget_fraction", lambda: Q.SingleConfig(2.5), ValueError, "budget"),
    ("single_exact_law_int", lambda: Q.SingleConfig(3, exact_law=1), TypeError, "exact_law"),
    ("dp_sgd_config", lambda: Q.dp_sgd(Q.SingleConfig(3)), ValueError, "LocalSGDConfig"),
    ("dp_sgd_granularity", lambda: Q.dp_sgd(CONFIG, granularity=0.3), ValueError, "granularity"),
    ("local_sgd_config", lambda: Q.local_sgd("C1"), ValueError, "LocalSGDConfig"),
    ("dc_config", lambda: Q.divide_and_conquer(CONFIG), ValueError, "DivideAndConquerConfig"),
    ("single_config", lambda: Q.single(CONFIG), ValueError, "SingleConfig"),
    ("schedule_constant_zero", lambda: Q.constant(0), ValueError, "local_steps"),
    ("schedule_custom_empty", lambda: Q.custom([]), ValueError, "local_steps"),
    ("schedule_name", lambda: Q.schedules.by_name("C0"), ValueError, "schedule must be"),
    # the algorithms' validate hook (params built without quantile_params' checks)
    ("validate_r_nan", lambda: _validate(r=[0.5, NAN]), ValueError, r"r must be in \(0, 1\]"),
    ("validate_r_above_one", lambda: _validate(r=[0.5, 1.5]), ValueError, r"r must be in \(0, 1\]"),
    ("validate_tau", lambda: _validate(tau=1.0), ValueError, r"tau must be in \(0, 1\)"),
    ("validate_lr_negative", lambda: _validate(lr_scale=-20.0), ValueError, "lr_scale must be"),
    ("validate_weights", lambda: _validate(weights=[0.9, 0.9]), ValueError, "weights must be"),
    ("validate_r_shape", lambda: _validate(r=[0.5, 0.5, 0.5]), ValueError, r"r must have one entry per client"),
    ("validate_scale", lambda: Q.single(Q.SingleConfig(3)).validate(
        PARAMS._replace(clients=Q.Clients(jnp.zeros(2), jnp.array([1.0, -1.0]), ("normal", "normal"))), None),
     ValueError, r"clients.scale must be"),
    ("validate_inputs", lambda: Q.dp_sgd(CONFIG).validate(PARAMS, jnp.ones((10, 2))), TypeError, "inputs must be None"),
    ("validate_not_params", lambda: Q.divide_and_conquer(Q.DivideAndConquerConfig(3)).validate({"r": 0.5}, None),
     TypeError, "QuantileParams"),
    ("simulate_grid_r", lambda: simulate(Q.local_sgd(CONFIG), _params(r=[0.5, 2.0]), make_key(0), 10),
     ValueError, r"r must be in \(0, 1\]"),
    # the local step and mechanisms' wrappers
    ("step_lr_negative", lambda: Q.privatized_step(0.0, 1.0, make_key(0), 0.5, 0.5, -0.1), ValueError, "lr must be"),
    ("step_r_zero", lambda: Q.privatized_step(0.0, 1.0, make_key(0), 0.5, 0.0, 0.1), ValueError, "r must be"),
    ("debias_r_above_one", lambda: Q.debiased_increment(True, 0.5, 1.5), ValueError, "r must be"),
    ("dp_sgd_mu_r", lambda: Q.dp_sgd_mu(0.0, 1e-5), ValueError, "r must be"),
    ("dp_sgd_mu_delta", lambda: Q.dp_sgd_mu(0.5, 1.0), ValueError, "delta must be"),
    # inference
    ("ci_variance_negative", lambda: Q.confidence_interval(0.0, -1.0), ValueError, "variance must be"),
    ("ci_level", lambda: Q.confidence_interval(0.0, 1.0, 0.3), ValueError, "level must be"),
    ("ci_no_variance", lambda: Q.confidence_interval(1.0), TypeError, "confidence_interval needs"),
    ("critical_value_string", lambda: Q.critical_value("95%"), ValueError, "level must be"),
    ("critical_values_mc_paths", lambda: Q.critical_values_mc(make_key(0), num_paths=10), ValueError, "num_paths"),
    ("asymptotic_variance_r", lambda: Q.asymptotic_variance([0.0, 0.5], [0.5, 0.5], [0.5, 0.5], [0.3, 0.3]),
     ValueError, "r must be"),
]


@pytest.mark.parametrize("name,call,error,match", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_naming_the_argument(name, call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_there_are_enough_cases():
    assert len(CASES) >= 20


def _runner(algorithm, steps):
    return jax.jit(lambda p: rollout(algorithm, p, make_key(0), steps)[1].estimate)


RUNNERS = {
    "local_sgd": _runner(Q.local_sgd(CONFIG), CONFIG.num_rounds),
    "dp_sgd": _runner(Q.dp_sgd(CONFIG), CONFIG.num_rounds),
    "divide_and_conquer": _runner(Q.divide_and_conquer(Q.DivideAndConquerConfig(10)), 10),
    "single": _runner(Q.single(Q.SingleConfig(10)), 10),
}


@pytest.mark.parametrize("leaf,value", [("r", [0.5, 1.5]), ("r", [NAN, 0.5]), ("r", [0.0, 0.5]),
                                        ("tau", 1.2), ("lr_scale", -1.0), ("lr_power", 0.2)])
def test_traced_invalid_params_give_a_nan_estimate(leaf, value):
    # The same values under jit (no concrete check possible) fail closed: the estimate is NaN,
    # never a noiseless or unvalidated number. (One compiled runner per algorithm.)
    params = _params(**{leaf: value})
    for name, run in RUNNERS.items():
        assert np.isnan(run(params)), (name, leaf, value)
    assert all(np.isfinite(run(PARAMS)) for run in RUNNERS.values())
