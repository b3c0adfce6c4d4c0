"""Random-number generator rates: ``jax.random.bits`` under ``jit``, steady state.

For every key implementation this JAX offers (tried by name; an implementation that fails to
build or compile on the backend is reported with its error instead of a rate) the generator
draws 2^22 .. 2^24 uint32 words in one call (``jax.random.bits(key, (N,))``) and over
``vmap`` of 1024 keys (``N / 1024`` words each: the way the engine draws, one key per run).
Each size is compiled and run once, then timed ``repeats`` times (best time,
``block_until_ready``). The rate of an implementation is its best words/second over the sizes
and both layouts; the bench's RNG floor divides a workload's random words by the fastest rate.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import jax
import jax.numpy as jnp

#: Key implementations tried (JAX names); the ones this JAX lacks are skipped.
CANDIDATE_IMPLS = (
    "threefry2x32",
    "threefry4x32",
    "philox2x32",
    "philox4x32",
    "rbg",
    "unsafe_rbg",
)
DEFAULT_SIZES = (2**22, 2**23, 2**24)
VMAP_KEYS = 1024


@dataclasses.dataclass
class GeneratorRate:
    """Measured rates of one key implementation (words per second)."""

    impl: str
    flat: dict[int, float]  # N -> words/s of bits(key, (N,))
    vmapped: dict[int, float]  # N -> words/s of vmap over VMAP_KEYS keys of N / VMAP_KEYS words
    error: str | None = None

    @property
    def rate(self) -> float:
        rates = list(self.flat.values()) + list(self.vmapped.values())
        return max(rates) if rates else 0.0

    def as_dict(self) -> dict:
        return {
            "impl": self.impl,
            "words_per_second": self.rate,
            "flat": {str(k): v for k, v in self.flat.items()},
            "vmap": {str(k): v for k, v in self.vmapped.items()},
            "error": self.error,
        }


def available_impls(candidates: Sequence[str] = CANDIDATE_IMPLS) -> list[str]:
    """The candidate implementation names ``jax.random.key(0, impl=...)`` accepts."""
    found = []
    for name in candidates:
        try:
            jax.random.key(0, impl=name)
        except (ValueError, TypeError, KeyError):
            continue
        found.append(name)
    return found


def _best_time(fn, arg, repeats: int) -> float:
    jax.block_until_ready(fn(arg))  # compile + first run
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(arg))
        best = min(best, time.perf_counter() - start)
    return best


def measure_rate(impl: str, sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 3) -> GeneratorRate:
    """Steady-state words/second of ``impl`` at each size, flat and under vmap."""
    result = GeneratorRate(impl, {}, {})
    try:
        key = jax.random.key(0, impl=impl)
        for size in sizes:
            flat = jax.jit(lambda k, size=size: jax.random.bits(k, (size,), jnp.uint32))
            result.flat[int(size)] = size / _best_time(flat, key, repeats)
            per_key = max(size // VMAP_KEYS, 1)
            keys = jax.random.split(key, VMAP_KEYS)
            batched = jax.jit(
                jax.vmap(lambda k, per_key=per_key: jax.random.bits(k, (per_key,), jnp.uint32))
            )
            result.vmapped[int(size)] = per_key * VMAP_KEYS / _best_time(batched, keys, repeats)
    except Exception as error:  # noqa: BLE001 -- a generator that does not compile is reported
        result.error = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    return result


def measure_rates(
    impls: Sequence[str] | None = None, sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 3
) -> list[GeneratorRate]:
    """:func:`measure_rate` for every available implementation (or the given ones)."""
    names = available_impls() if impls is None else list(impls)
    return [measure_rate(name, sizes, repeats) for name in names]


def fastest(rates: Sequence[GeneratorRate]) -> GeneratorRate:
    """The implementation with the highest rate (ValueError if none produced a rate)."""
    usable = [r for r in rates if r.rate > 0]
    if not usable:
        raise ValueError("no key implementation produced a rate")
    return max(usable, key=lambda r: r.rate)


__all__ = [
    "CANDIDATE_IMPLS",
    "DEFAULT_SIZES",
    "GeneratorRate",
    "available_impls",
    "fastest",
    "measure_rate",
    "measure_rates",
]
