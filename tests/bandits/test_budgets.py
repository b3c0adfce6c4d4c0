"""The dynamic schedule's cube root (``budgets.cube_root``) against float64 references.

``cube_root`` replaces ``jnp.cbrt`` in the per-visitor step (exp(log y / 3) and one Newton
step). Its documented accuracy is 2 ulp of the working dtype relative to the exact root; the
reference is NumPy's float64 ``cbrt`` of the same (already rounded) input, exact to 1e-16, so
the bound has no sampling error to allow for.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.bandits import budgets as budgets_lib


def _ulp(dtype) -> float:
    return float(jnp.finfo(dtype).eps)


def test_cube_root_is_within_two_ulp_of_the_exact_root():
    dtype = jnp.result_type(float)
    # the schedule's arguments K log c / c over clocks 1..2e5 and K in {2, 8}, plus a wide
    # logarithmic sweep (denormals excluded: they are below any budget's resolution)
    clocks = np.arange(1, 200_001, dtype=np.float64)
    args = [k * np.log(clocks) / clocks for k in (2.0, 8.0)]
    args.append(np.geomspace(1e-30, 1e30, 20_001))
    sweep = np.concatenate(args)
    y = jnp.asarray(np.concatenate([sweep, -sweep]), dtype)  # negative roots as jnp.cbrt
    got = np.asarray(budgets_lib.cube_root(y), np.float64)
    exact = np.cbrt(np.asarray(y, np.float64))
    nonzero = exact != 0
    rel = np.abs(got[nonzero] - exact[nonzero]) / np.abs(exact[nonzero])
    assert rel.max() <= 2 * _ulp(dtype), rel.max()
    assert np.all(got[~nonzero] == 0.0)


def test_cube_root_keeps_zero_nan_inf_signs_and_gradients_finite():
    dtype = jnp.result_type(float)
    values = budgets_lib.cube_root(jnp.asarray([0.0, np.nan, 8.0, -27.0, np.inf, -np.inf], dtype))
    assert float(values[0]) == 0.0 and np.isnan(float(values[1]))
    assert abs(float(values[2]) - 2.0) <= 2 * _ulp(dtype) * 2.0
    assert abs(float(values[3]) + 3.0) <= 2 * _ulp(dtype) * 3.0
    assert float(values[4]) == np.inf and float(values[5]) == -np.inf
    # subnormal inputs (below any budget's resolution) stay finite and non-negative
    tiny = float(budgets_lib.cube_root(jnp.asarray(1e-40 if dtype == jnp.float32 else 1e-310,
                                                   dtype)))
    assert np.isfinite(tiny) and tiny >= 0.0
    # d/dy y^(1/3) = y^(-2/3) / 3; at y = 0 the unselected branch must not leak a NaN
    grad = jax.grad(lambda t: budgets_lib.cube_root(t))
    assert abs(float(grad(jnp.asarray(8.0, dtype))) - 1.0 / 12.0) <= 1e-5
    assert np.isfinite(float(grad(jnp.asarray(0.0, dtype))))


def test_dynamic_schedule_matches_its_closed_form_in_float64():
    dtype = jnp.result_type(float)
    clocks = np.arange(1, 5001, dtype=np.float64)
    for k, init in ((2, 2), (5, 10)):
        got = np.asarray(budgets_lib.dynamic_explore_prob(clocks, k, init), np.float64)
        exact = np.where(clocks <= init, 1.0,
                         np.minimum(1.0, np.cbrt(k * np.log(clocks) / clocks)))
        # the argument K log c / c is itself rounded in the working dtype (a few ulp), and
        # the cube root divides that relative error by 3, then adds its own 2 ulp
        assert np.max(np.abs(got - exact) / exact) <= 6 * _ulp(dtype)
