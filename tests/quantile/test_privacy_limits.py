"""DP-SGD's granular range is checked at validation, and DC's step constant has one home.

The grid scale is recomputed here from integers: with sensitivity 1 and g = 2^-k the rounded
sensitivity is D = 2^k + 1 grid steps and the Laplace scale is about D / eps_k grid units.
"""

from __future__ import annotations

import importlib
import math

import jax.numpy as jnp
import pytest

import ldpjax.quantile as Q
from ldpjax.engine import make_key, simulate
from ldpjax.mechanisms.laplace import MAX_GRID_SCALE

CONFIG = Q.LocalSGDConfig(budget=20, schedule=Q.C5)


def _params(r: float):
    return Q.quantile_params(0.5, r, Q.make_clients("normal", loc=[0.0, 0.0]))


def test_dp_sgd_granularity_beyond_the_sampler_is_refused_at_validation():
    # r = 0.1: eps = log(1.1 / 0.9) = 0.2007; at g = 2^-14, D / eps = 16385 / 0.2007 = 81650 grid
    # units, above the exact sampler's range: a ValueError before anything compiles, not NaN
    eps = math.log(1.1 / 0.9)
    assert (2**14 + 1) / eps > MAX_GRID_SCALE >= (2**11 + 1) / eps
    with pytest.raises(ValueError, match=r"granularity.*params\.r down to 0\.1.*2\*\*-11"):
        simulate(Q.dp_sgd(CONFIG, granularity=2**-14), _params(0.1), make_key(0),
                 CONFIG.num_rounds, num_seeds=1)
    Q.dp_sgd(CONFIG, granularity=2**-11).validate(_params(0.1), None)  # within range: passes
    with pytest.raises(ValueError, match="granularity"):  # the Algorithm's own hook, too
        Q.dp_sgd(CONFIG, granularity=2**-14).validate(_params(0.1), None)


def test_dc_step_constant_has_one_home():
    experiment = importlib.import_module("ldpjax_experiments.quantile_coverage")
    divide_and_conquer = importlib.import_module("ldpjax.quantile.divide_and_conquer")

    assert experiment.DC_LR_SCALE is divide_and_conquer.DC_LR_SCALE
    option = next(o for o in experiment.EXPERIMENT.options if o.name == "dc_lr_scale")
    assert option.default == divide_and_conquer.DC_LR_SCALE
    params = experiment.method_params("DC", _params(0.5), {"dc_lr_scale": option.default})
    assert float(params.lr_scale) == float(jnp.asarray(divide_and_conquer.DC_LR_SCALE))
