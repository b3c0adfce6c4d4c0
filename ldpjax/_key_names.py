"""The generator names the engine and the command line accept (no JAX import: the CLI's parser
reads them at start-up).

:data:`ENGINE_IMPLS` are JAX's generators that :func:`ldpjax.engine.make_key`, ``simulate(...,
rng=NAME)`` and ``--key-impl`` offer (those of them that the installed JAX registers:
:data:`ldpjax.engine.keys.KEY_IMPLS`); :data:`ALIASES` are short names for two of them. The
secure generator of releases (``ldpjax_secure128``) is not among them: it has no seed.
"""

from __future__ import annotations

#: JAX generators the engine offers by name (threefry4x32 is left out: see ldpjax.engine.keys).
ENGINE_IMPLS = ("threefry2x32", "philox4x32", "philox2x32", "rbg", "unsafe_rbg")
#: Short names: ``threefry`` and ``philox``.
ALIASES = {"threefry": "threefry2x32", "philox": "philox2x32"}
#: Every name ``--key-impl`` and :func:`ldpjax.engine.keys.resolve_impl` accept.
KEY_IMPL_CHOICES = ENGINE_IMPLS + tuple(ALIASES)

__all__ = ["ALIASES", "ENGINE_IMPLS", "KEY_IMPL_CHOICES"]
