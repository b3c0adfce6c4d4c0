"""PRNG keys and the engine's key schedule: explicit, never defaulted, with a selectable generator.

``make_key(seed, impl)`` returns a typed key. The engine derives every run's keys from it:
run ``s`` (seed index, uint32) gets ``init_key, run_key = split(fold_in(key, s))`` and step t
``fold_in(run_key, t)``; with independent grid streams the key is first ``fold_in(key, g)``.

Generators (``impl``); ``ldpjax bench`` and ``python experiments/bench_key_derivation.py``
measure their speed on your machine (threefry4x32 is left out: its scan takes far too long to
compile).

* ``philox4x32`` (the engine's default where this JAX offers it: :data:`DEFAULT_IMPL`,
  ``rng="invariant"``): counter based with **64-bit** keys (like threefry2x32); streams are
  bit-identical however runs are split across devices, chunks or ``vmap`` batches; faster
  than threefry2x32 on CPU. It does not compile as one program sharded over several devices
  (XLA cannot legalize its ``mulhi``), so on several devices the engine runs one program per
  device (``SimulationInfo.execution == "per_device"``) -- same records, never a failure.
  Older JAX releases without it fall back to threefry2x32.
* ``threefry2x32`` (JAX's own default): the same invariance with 64-bit keys, and it compiles
  sharded; slower on CPU. ``make_key(seed, "threefry2x32")`` or ``--key-impl threefry2x32``.
* ``philox2x32`` (the engine's ``rng="fast"`` on CPU): counter based and invariant too, a
  little faster than philox4x32, but its keys are **32 bits**: the engine derives one key per
  (run, step), and among 10^7 such keys ~1.2 x 10^4 pairs coincide (birthday bound
  n^2 / 2^33; ``tests/engine/test_engine_rng.py`` checks 2^20 keys), so two different
  (run, step) pairs then see the same random numbers.
  Runs device by device like philox4x32.
* ``rbg`` / ``unsafe_rbg`` use the XLA RngBitGenerator; deterministic for a fixed program, but
  not guaranteed to match across batchings.

* ``ldpjax_secure128`` (:data:`SECURE_IMPL`, releases of real data): the generator of
  :func:`ldpjax.mechanisms.secure_key`, Threefry-4x32 with **128-bit** keys from the OS
  CSPRNG. It has no seed (``make_key`` cannot make one), it is invariant and compiles sharded,
  and a secure key is never converted: :func:`convert_key` refuses to turn it into another
  generator (which would narrow it to 32 or 64 bits) or another key into it, and
  ``simulate`` / ``rollout`` refuse any ``rng`` but ``None`` with it.

A key made with :func:`make_key` (or by the CLI) uses :data:`DEFAULT_IMPL`; a key you make
yourself with ``jax.random.key`` keeps its own generator unless ``simulate(..., rng=...)`` says
otherwise.
"""

from __future__ import annotations

import functools
import importlib

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax._key_names import ALIASES, ENGINE_IMPLS
from ldpjax.mechanisms.secure import SECURE_IMPL, impl_name, is_secure_key
from ldpjax.types import PRNGKey


def _registered_impls() -> frozenset[str]:
    """Names of the PRNG implementations this JAX release registers, read from its registry
    (no array is made, so importing this module does not start a backend)."""
    for module in ("jax._src.random.prng", "jax._src.prng"):  # newer / older JAX layouts
        try:
            return frozenset(importlib.import_module(module).prngs)
        except (ImportError, AttributeError):
            continue
    return frozenset({"threefry2x32", "rbg", "unsafe_rbg"})


#: The key implementations the engine accepts (those of the six that this JAX offers;
#: threefry4x32 is left out: see the module docstring).
_REGISTERED = _registered_impls()
KEY_IMPLS = tuple(i for i in ENGINE_IMPLS if i in _REGISTERED)
_ALIASES = ALIASES

#: Generators that give bit-identical results across chunk sizes and device counts (the
#: secure generator of releases too).
INVARIANT_IMPLS = tuple(
    i for i in ("threefry2x32", "philox4x32", "philox2x32") if i in KEY_IMPLS
) + (SECURE_IMPL,)
#: ``rng="invariant"`` and the default of :func:`make_key` and the CLI: the fastest invariant
#: generator with 64-bit keys (philox4x32 where this JAX offers it, else threefry2x32).
INVARIANT_DEFAULT = "philox4x32" if "philox4x32" in KEY_IMPLS else "threefry2x32"
DEFAULT_IMPL = INVARIANT_DEFAULT
#: ``rng="fast"``: the fastest generator per backend (measured; see the module docstring).
#: Unmeasured backends keep the invariant default.
FAST_BY_BACKEND = {"cpu": "philox2x32"} if "philox2x32" in KEY_IMPLS else {}
#: Generators that fail to compile as one program sharded over several devices (the engine
#: then runs one program per device).
UNSHARDABLE_IMPLS = ("philox2x32", "philox4x32")
#: Largest number of seed indices (``seed_offset + num_seeds``): ``fold_in`` takes 32 bits.
MAX_SEED_INDEX = 2**32


def resolve_impl(impl: str) -> str:
    name = _ALIASES.get(impl, impl) if isinstance(impl, str) else impl
    if name == SECURE_IMPL:
        raise ValueError(f"key_impl {SECURE_IMPL!r} has no seed: its keys come only from "
                         "ldpjax.mechanisms.secure_key()")
    if name not in KEY_IMPLS:
        raise ValueError(f"key_impl must be one of {KEY_IMPLS + tuple(_ALIASES)}, got {impl!r}")
    return name


def make_key(seed: int, impl: str | None = None) -> PRNGKey:
    """A typed PRNG key from an integer seed and a key implementation name
    (default :data:`DEFAULT_IMPL`: philox4x32 where this JAX offers it, else threefry2x32)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    return jax.random.key(int(seed), impl=resolve_impl(DEFAULT_IMPL if impl is None else impl))


def as_typed_key(key: PRNGKey) -> PRNGKey:
    """Accept typed keys and legacy uint32 keys; return a typed key."""
    if isinstance(key, (str, bytes)) or key is None:
        raise TypeError(f"key must be a PRNG key (jax.random.key), got {key!r}")
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    if key.dtype == jnp.uint32:
        return jax.random.wrap_key_data(key)
    raise ValueError(f"key must be a PRNG key (jax.random.key), got dtype {key.dtype}")


def key_impl_name(key: PRNGKey) -> str:
    key = as_typed_key(key)
    if is_secure_key(key):
        return SECURE_IMPL
    name = impl_name(key)
    for impl in KEY_IMPLS:  # repr may be "PRNGImpl(threefry2x32)" in some versions
        if name == impl or name.endswith(f"({impl})") or name.endswith(f".{impl}"):
            return impl
    return name


@functools.cache
def _key_data_shape(impl: str) -> tuple[int, ...]:
    return tuple(jax.random.key_data(jax.random.key(0, impl=impl)).shape)


def resolve_rng(rng: str | None, key: PRNGKey, backend: str | None = None) -> str:
    """The generator the engine uses: ``None`` keeps the key's own, ``"invariant"``,
    ``"fast"`` or an implementation name. A secure key (:data:`SECURE_IMPL`) takes only
    ``None``: ``ValueError`` otherwise (it is never converted)."""
    if rng is None:
        return key_impl_name(key)
    if is_secure_key(as_typed_key(key)):
        raise ValueError(
            f"rng must be None with a secure key (ldpjax.mechanisms.secure_key()); got {rng!r}: "
            f"a secure key runs with its own {SECURE_IMPL} generator and is never converted "
            "(another generator would narrow its 128 bits to 32 or 64)"
        )
    if rng == "invariant":
        return INVARIANT_DEFAULT
    if rng == "fast":
        return FAST_BY_BACKEND.get(backend or jax.default_backend(), INVARIANT_DEFAULT)
    if not isinstance(rng, str):
        raise TypeError(f"rng must be None, 'invariant', 'fast' or a key impl name, got {rng!r}")
    try:
        return resolve_impl(rng)
    except ValueError:
        raise ValueError(
            f"rng must be None, 'invariant', 'fast' or one of {KEY_IMPLS}, got {rng!r}"
        ) from None


def convert_key(key: PRNGKey, impl: str) -> PRNGKey:
    """``key`` itself if it already uses ``impl``; else a key of ``impl`` whose data are the
    first random words of ``key`` (deterministic, so ``rollout`` and ``simulate`` agree).

    Never narrows a release key: a secure key (:func:`ldpjax.mechanisms.secure_key`) converts
    only to itself, and no key converts to the secure generator (its keys come from the OS
    CSPRNG, never from another key's words). Both raise ``ValueError``.
    """
    key = as_typed_key(key)
    name = key_impl_name(key)
    if name == impl:
        return key
    if name == SECURE_IMPL:
        raise ValueError(
            f"convert_key: a secure key ({SECURE_IMPL}, 128 bits) is never converted to another "
            f"generator; got impl={impl!r}: the key would be narrowed to that generator's (32 or "
            "64 bits for philox and threefry2x32, which a search over all keys recovers). Run "
            "with the secure key as it is (rng=None)"
        )
    if impl == SECURE_IMPL:
        raise ValueError(
            f"convert_key: impl={impl!r} is the generator of secure keys, which come only from "
            f"ldpjax.mechanisms.secure_key(); a {name} key cannot become one"
        )
    data = jax.random.bits(key, _key_data_shape(impl), jnp.uint32)
    return jax.random.wrap_key_data(data, impl=impl)


def seed_keys(key: PRNGKey, seed_index) -> tuple[PRNGKey, PRNGKey]:
    """(init_key, run_key) of run ``seed_index``: split(fold_in(key, seed_index))."""
    init_key, run_key = jax.random.split(jax.random.fold_in(key, seed_index))
    return init_key, run_key


__all__ = [
    "DEFAULT_IMPL",
    "FAST_BY_BACKEND",
    "INVARIANT_DEFAULT",
    "INVARIANT_IMPLS",
    "KEY_IMPLS",
    "MAX_SEED_INDEX",
    "SECURE_IMPL",
    "UNSHARDABLE_IMPLS",
    "as_typed_key",
    "convert_key",
    "key_impl_name",
    "make_key",
    "resolve_impl",
    "resolve_rng",
    "seed_keys",
]
