"""Guard against a known XLA CPU miscompilation in jaxlib 0.10.2, whatever the import order.

jaxlib 0.10.2's CPU backend ("YNN" fusion) returns wrong values for some jitted
broadcast -> exp -> reduce fusions once the output passes ~32k elements (found while building
the COVID stand-in; reproduced in ``tests/engine/test_xla_guard.py``; jaxlib 0.8.2, 0.9.2,
0.10.0 and 0.10.1 are correct). ``pyproject.toml`` excludes that jaxlib (``!=0.10.2``); for an
environment that already has it, two guards turn that fusion off
(``xla_cpu_experimental_ynn_fusion_type`` set to the empty string):

* at import, ldpjax adds ``--xla_cpu_experimental_ynn_fusion_type=`` to ``XLA_FLAGS``. XLA reads
  the flags when the backend starts, so this covers every computation of the process only when
  ``import ldpjax`` comes before the first JAX computation;
* if JAX had already computed something at ``import ldpjax`` (the flag comes too late), the
  engine's kernels (:func:`ldpjax.engine.rollout.kernels`: every ``simulate``, ``release_run``
  and ``ldpjax bench`` run) are compiled with the same setting as a compiler option
  (:func:`kernel_options`), so they are correct, and as fast, whichever came first; a warning
  says that computations outside the engine's kernels are not covered.

Neither applies when the user already set the option in ``XLA_FLAGS`` or set
``LDPJAX_KEEP_XLA_FLAGS=1``.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import warnings

FLAG = "--xla_cpu_experimental_ynn_fusion_type="
OPTION = "xla_cpu_experimental_ynn_fusion_type"
AFFECTED_JAXLIB = ("0.10.2",)

#: Whether the engine's CPU kernels take :data:`OPTION` (decided once, at import).
_KERNEL_GUARD = False


def _jaxlib_version() -> str | None:
    module = sys.modules.get("jaxlib")
    version = getattr(getattr(module, "version", None), "__version__", None)
    if version:
        return str(version)
    try:
        return importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        return None


def apply_workaround() -> bool:
    """Set up the guard this process needs; return True if the flag is in effect for it (else
    the engine's kernels take the option, see :func:`kernel_options`)."""
    global _KERNEL_GUARD
    if os.environ.get("LDPJAX_KEEP_XLA_FLAGS"):
        return False
    version = _jaxlib_version()
    if version not in AFFECTED_JAXLIB:
        return False
    flags = os.environ.get("XLA_FLAGS", "")
    if OPTION in flags:  # the user's own setting: left as it is
        return True
    if _backend_started():  # too late for the flag: the engine's kernels take the option
        _KERNEL_GUARD = True
        warnings.warn(
            f"ldpjax: jaxlib {version} has a known CPU miscompilation; JAX computed before "
            "`import ldpjax`, so only the engine's kernels get the workaround (a compiler "
            "option). Import ldpjax before any JAX computation, set "
            f"XLA_FLAGS={FLAG}, or install another jaxlib (pip install 'jaxlib!=0.10.2')",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    os.environ["XLA_FLAGS"] = f"{flags} {FLAG}".strip()
    return True


def kernel_options() -> tuple[tuple[str, str], ...]:
    """The compiler options the engine's CPU kernels add: ``((OPTION, ""),)`` when the affected
    jaxlib is loaded and the flag came too late (JAX computed before ``import ldpjax``), else
    ``()``."""
    return ((OPTION, ""),) if _KERNEL_GUARD else ()


def _backend_started() -> bool:
    if "jax" not in sys.modules:  # JAX not imported yet: no backend, and importing it here
        return False  # would make ``import ldpjax`` (and the CLI's start-up) pay for it
    try:
        from jax._src import xla_bridge

        return bool(getattr(xla_bridge, "_backends", {}))
    except Exception:  # noqa: BLE001 - private API; assume not started
        return False
