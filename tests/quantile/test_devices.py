"""Determinism (issue 9, item 8): quantile runs in float64 are bit-identical on 1 and 4 devices.

The client average sum_k p_k q_k is added in a fixed order inside each run
(``ldpjax.quantile.rounds.weighted_sum``), never across the sharded seed axis, so neither the
number of devices nor the seed chunk can change the last bit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO

SCRIPT = Path(__file__).with_name("devices_script.py")


@pytest.mark.slow  # a 4-device subprocess (~15 s); the engine's 4-device test stays in the fast set
def test_float64_bit_identical_on_one_and_four_devices(tmp_path):
    out = tmp_path / "devices.npz"
    env = dict(os.environ)
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    subprocess.run([sys.executable, str(SCRIPT), str(out)], env=env, check=True, timeout=900)
    got = np.load(out)
    for name in ("c1", "log_sampling", "single"):
        assert int(got[f"four_{name}_devices"]) == 4
        assert int(got[f"one_{name}_devices"]) == 1
        reference = got[f"one_{name}_estimate"]
        assert reference.dtype == np.float64 and reference.shape == (2, 40)
        assert np.all(np.isfinite(reference))
        for label in ("four", "one_chunk7"):
            np.testing.assert_array_equal(got[f"{label}_{name}_estimate"], reference, err_msg=f"{label} {name}")
            np.testing.assert_array_equal(got[f"{label}_{name}_variance"], got[f"one_{name}_variance"])
