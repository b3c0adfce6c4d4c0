"""ldpjax's log_ndtr against mpmath (50 digits), in float32 and float64.

jax's own float64 log_ndtr errs by up to 9e4 eps (|log Phi| + 1) just below z = -20, where
it switches to its asymptotic series; ldpjax's is within its stated bound everywhere."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from jax.scipy.special import log_ndtr as jax_log_ndtr

from ldpjax._special import LOG_NDTR_ULPS, log_ndtr

Z = np.concatenate([-np.geomspace(1e-4, 1000.0, 400), np.linspace(0.0, 8.0, 17),
                    np.linspace(-40.0, -10.0, 121)])


def _reference(z: np.ndarray) -> np.ndarray:
    with mp.workdps(50):
        return np.array([float(mp.log(mp.ncdf(mp.mpf(float(x))))) for x in z])


def _ulps(ours: np.ndarray, ref: np.ndarray, dtype) -> np.ndarray:
    return np.abs(ours - ref) / (np.abs(ref) + 1.0) / np.finfo(dtype).eps


@pytest.mark.parametrize("x64_mode", [False, True])
def test_log_ndtr_is_within_its_bound(x64_mode):
    with jax.enable_x64(x64_mode):
        dtype = np.float64 if x64_mode else np.float32
        z = Z.astype(dtype)
        ours = np.asarray(log_ndtr(jnp.asarray(z)), np.float64)
        err = _ulps(ours, _reference(z), dtype)
        assert err.max() <= LOG_NDTR_ULPS / 2, (err.max(), z[err.argmax()])
        grads = np.asarray(jax.vmap(jax.grad(log_ndtr))(jnp.asarray(z)))
        assert np.all(np.isfinite(grads))
        # d/dz log Phi(z) = phi(z) / Phi(z) = -z (1 + 1/z^2 + O(z^-4)) far below 0 (float64;
        # float32's rounding of the series' terms leaves about 1% there)
        far = (z < -50) & x64_mode
        np.testing.assert_allclose(grads[far], -z[far] * (1 + 1 / z[far] ** 2),
                                   rtol=1e-3)


def test_jax_log_ndtr_needed_the_replacement_in_float64():
    # pins why ldpjax has its own: the reference shows jax's float64 error just below -20
    with jax.enable_x64(True):
        z = np.linspace(-25.0, -20.0, 51)
        err = _ulps(np.asarray(jax_log_ndtr(jnp.asarray(z))), _reference(z), np.float64)
        ours = _ulps(np.asarray(log_ndtr(jnp.asarray(z))), _reference(z), np.float64)
    assert ours.max() <= LOG_NDTR_ULPS / 2
    if err.max() <= LOG_NDTR_ULPS:  # a later jax may fix its series
        pytest.skip("jax's log_ndtr is accurate here now")
    assert err.max() > 100 * ours.max()
