"""Guard against a known XLA CPU miscompilation in jaxlib 0.10.2.

jaxlib 0.10.2's CPU backend ("YNN" fusion) returns wrong values for some jitted
broadcast -> exp -> reduce fusions once the output passes ~32k elements (found while building
the COVID stand-in; reproduced in ``tests/foundation/test_xla_guard.py``; jaxlib 0.8.2, 0.9.2,
0.10.0 and 0.10.1 are correct). Disabling that fusion with
``--xla_cpu_experimental_ynn_fusion_type=`` fixes it. ldpjax adds the flag to ``XLA_FLAGS``
at import time for the affected jaxlib versions, unless the user already set the option or
``LDPJAX_KEEP_XLA_FLAGS=1``. XLA reads the flags when the backend starts, so ``import ldpjax``
must come before the first JAX computation; otherwise a warning says so.
"""

from __future__ import annotations

import importlib.metadata
import os
import warnings

FLAG = "--xla_cpu_experimental_ynn_fusion_type="
AFFECTED_JAXLIB = ("0.10.2",)


def apply_workaround() -> bool:
    """Add the flag when needed; return True if it is in effect for this process."""
    if os.environ.get("LDPJAX_KEEP_XLA_FLAGS"):
        return False
    try:
        version = importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        return False
    if version not in AFFECTED_JAXLIB:
        return False
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_experimental_ynn_fusion_type" in flags:
        return True
    if _backend_started():
        warnings.warn(
            f"ldpjax: jaxlib {version} has a known CPU miscompilation; import ldpjax before "
            f"running any JAX computation (or set XLA_FLAGS={FLAG}) so the workaround applies",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    os.environ["XLA_FLAGS"] = f"{flags} {FLAG}".strip()
    return True


def _backend_started() -> bool:
    import sys

    if "jax" not in sys.modules:  # JAX not imported yet: no backend, and importing it here
        return False  # would make ``import ldpjax`` (and the CLI's start-up) pay for it
    try:
        from jax._src import xla_bridge

        return bool(getattr(xla_bridge, "_backends", {}))
    except Exception:  # noqa: BLE001 - private API; assume not started
        return False
