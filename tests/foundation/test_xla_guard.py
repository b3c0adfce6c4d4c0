"""Regression test for the jaxlib 0.10.2 CPU miscompilation that ldpjax works around.

Computed in a fresh subprocess that imports ldpjax first (as users do), against NumPy.
If a future jaxlib shows the same bug, this test fails and ``ldpjax/_xla.py`` needs the
version added.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import ldpjax
import jax, jax.numpy as jnp, numpy as np
rng = np.random.default_rng(0)
centre = rng.uniform(0, 148, (293, 6)).astype(np.float32)
height = rng.uniform(0, 0.3, (293, 6)).astype(np.float32)
width = rng.uniform(5, 20, (6,)).astype(np.float32)
weeks = np.arange(148, dtype=np.float32)[:, None, None]
def template(w, c, s, h):
    return 0.07 + jnp.sum(h * jnp.exp(-0.5 * ((w - c) / s) ** 2), -1)
got = np.asarray(jax.jit(template)(weeks, centre, width, height))
ref = 0.07 + np.sum(height * np.exp(-0.5 * ((weeks - centre) / width) ** 2), -1)
print(float(np.abs(got - ref).max()))
"""


def test_broadcast_exp_reduce_fusion_is_correct():
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "LDPJAX_KEEP_XLA_FLAGS")}
    env["PYTHONPATH"] = str(REPO)
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    assert float(out.stdout.strip().splitlines()[-1]) < 1e-5
