"""Keys for releases of real data: 128 bits from the OS CSPRNG, a generator that keeps them.

*Simulation* (the experiments, ``ldpjax reproduce``, the engine's ``make_key(seed)``) uses public
integer seeds: its noise is replayable from the seed that ``run.json`` records, which is what a
study wants (common random numbers across grid points, reruns that match) and exactly what a
release of real data must not have: anyone holding the seed can subtract the noise.

A *release* of real data takes its key from :func:`secure_key`: 128 bits from
``secrets.token_bytes`` (the OS CSPRNG), as a key of the generator ``ldpjax_secure128``
(:data:`SECURE_IMPL`), registered with JAX's public ``jax.extend.random.define_prng_impl``. The
key is never derived from a seed, never logged and never written to disk by ldpjax; keep it in
memory and let it go once the release is made.

The generator. Every operation is one block of Threefry-4x32 with 20 rounds (Salmon, Moraes,
Dror & Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3", SC 2011), a keyed function of a
128-bit counter under a **128-bit key** (the four uint32 words of the key data), checked
against the published known-answer vectors of Random123:

* ``random_bits(key, width, shape)``: the words of blocks ``F_key(j, 0, 0, 0)``, j = 0, 1, ...,
  four 32-bit words per block (a 64-bit value takes two);
* ``split(key, shape)``: child i is the block ``F_key(i, 0, 0, 1)``;
* ``fold_in(key, d)``: the block ``F_key(d, 0, 0, 2)``.

The last counter word separates the three uses, so no child key equals a block of random bits
or another operation's child (JAX's own ``threefry4x32`` reads the same counters for ``split``
and ``fold_in``: ``fold_in(k, i)`` equals ``split(k, n)[i]``). Every derived key is again a
full 128-bit block, so splitting and folding never narrow the key. Threefry is a statistical
generator built like a block cipher, not a vetted cipher; what the 128 bits buy is that no
search over keys (2^128 candidates) can replay a release, where a 32- or 64-bit key (philox2x32,
threefry2x32, philox4x32) can be found by trying them all. (The XOR of two threefry2x32 streams
also holds 128 bits of key, but from known outputs a meet-in-the-middle search, about 2^64
work and 2^64 memory, finds its two 64-bit halves.) The 20 rounds run as a loop of five
4-round groups: on the fully unrolled 20 rounds of four words, XLA CPU's fusion emitters
recompute shared values in every consumer and the compiled step runs thousands of times slower
(``docs/pages/engine.md``, "Generators").

Keys of this generator have no seed: ``jax.random.key(0, impl=...)`` refuses, and the engine
never converts a secure key to another generator nor another key to this one
(:func:`ldpjax.engine.keys.convert_key`). :func:`is_secure_key` tells such a key apart, and
:func:`require_secure_key` is the check of every release entry point
(:func:`ldpjax.mechanisms.release`, :func:`ldpjax.engine.release_run`).
"""

from __future__ import annotations

import functools
import math
import secrets

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.random import define_prng_impl

from ldpjax._key_names import ALIASES
from ldpjax.types import Array, ArrayLike, PRNGKey

#: The name of the secure generator (``jax.random.key_impl`` of a :func:`secure_key`).
SECURE_IMPL = "ldpjax_secure128"
#: Bits of secret in a secure key.
SECURE_KEY_BITS = 128
ROUNDS = 20
# Threefry-4x32 rotation constants (Random123's R_32x4) and the key-schedule parity.
_ROTATIONS = np.array(
    ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20)), np.uint32
)
_PARITY = np.uint32(0x1BD11BDA)
# The last counter word: which operation a block serves (domain separation).
_RANDOM_BITS, _SPLIT, _FOLD_IN = 0, 1, 2


def _rotl(x: Array, d: Array) -> Array:
    return (x << d) | (x >> (np.uint32(32) - d))


def threefry4x32(key: ArrayLike, counter: ArrayLike, rounds: int = ROUNDS) -> Array:
    """The Threefry-4x32 block function: four uint32 words of ``counter`` under ``key``.

    Random123's ``threefry4x32_R(rounds, counter, key)`` (Salmon et al., SC 2011): the key
    schedule k_0..k_3, k_4 = k_0 ^ k_1 ^ k_2 ^ k_3 ^ 0x1BD11BDA is added every 4 rounds (with
    the injection count on word 3); each round adds, rotates (constants R_32x4) and xors word
    pairs (0, 1), (2, 3) on even rounds and (0, 3), (2, 1) on odd ones.

    Args:
      key: uint32 array of shape (..., 4).
      counter: uint32 array of shape (..., 4) (broadcast against ``key``).
      rounds: a static multiple of 4 (20: the generator's; 72: Threefish's count).

    Returns:
      uint32 array of shape (..., 4).

    Example (Random123's known-answer vector for zero key and counter):
      >>> import numpy as np
      >>> [f"{int(w):08x}" for w in threefry4x32(np.zeros(4, np.uint32), np.zeros(4, np.uint32))]
      ['9c6ca96a', 'e17eae66', 'fc10ecd4', '5256a7d8']
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 4 or rounds % 4:
        raise ValueError(f"rounds must be a positive multiple of 4; got {rounds!r}")
    key = jnp.asarray(key, jnp.uint32)
    counter = jnp.asarray(counter, jnp.uint32)
    if key.shape[-1:] != (4,) or counter.shape[-1:] != (4,):
        raise ValueError(f"key and counter must have a last axis of 4 words; got {key.shape}, "
                         f"{counter.shape}")
    key, counter = jnp.broadcast_arrays(key, counter)
    k = [key[..., i] for i in range(4)]
    schedule = jnp.stack(k + [k[0] ^ k[1] ^ k[2] ^ k[3] ^ _PARITY])
    x = tuple(counter[..., i] + k[i] for i in range(4))
    rotations = jnp.asarray(_ROTATIONS)

    def group(g, x):  # rounds 4g .. 4g + 3, then the key injection number g + 1
        x = list(x)
        for i in range(4):
            a, b = rotations[4 * (g % 2) + i, 0], rotations[4 * (g % 2) + i, 1]
            if i % 2 == 0:
                x[0] = x[0] + x[1]
                x[1] = _rotl(x[1], a) ^ x[0]
                x[2] = x[2] + x[3]
                x[3] = _rotl(x[3], b) ^ x[2]
            else:
                x[0] = x[0] + x[3]
                x[3] = _rotl(x[3], a) ^ x[0]
                x[2] = x[2] + x[1]
                x[1] = _rotl(x[1], b) ^ x[2]
        x = [x[i] + schedule[(g + 1 + i) % 5] for i in range(4)]
        x[3] = x[3] + (g + 1).astype(jnp.uint32)
        return tuple(x)

    # a loop, not 20 unrolled rounds: see the module docstring (XLA CPU's fusion emitters)
    return jnp.stack(lax.fori_loop(0, rounds // 4, group, x), axis=-1)


def _blocks(key: Array, count: int, tag: int, first_word: Array | None = None) -> Array:
    """``count`` blocks F_key(c, 0, 0, tag), c = 0..count-1 (or ``first_word``): (count, 4)."""
    c = lax.iota(jnp.uint32, count) if first_word is None else first_word
    zeros = jnp.zeros_like(c)
    counter = jnp.stack([c, zeros, zeros, zeros + np.uint32(tag)], axis=-1)
    return threefry4x32(key, counter)


def _check_count(count: int, what: str) -> None:
    if count >= 2**32:
        raise ValueError(f"{SECURE_IMPL}: {what} needs {count} blocks, more than 2**32 counters")


def _seed(seed: Array) -> Array:
    del seed
    raise ValueError(
        f"a {SECURE_IMPL} key is never made from a seed (its noise would be replayable by "
        "anyone who knows the seed): use ldpjax.mechanisms.secure_key()"
    )


@functools.partial(jax.jit, static_argnums=1, inline=True)
def _split_jit(key: Array, shape: tuple[int, ...]) -> Array:
    return _blocks(key, math.prod(shape), _SPLIT).reshape(shape + (4,))


def _split(key: Array, shape) -> Array:
    shape = tuple(int(d) for d in shape)
    _check_count(math.prod(shape), "split")
    return _split_jit(key, shape)


@functools.partial(jax.jit, inline=True)
def _fold_in(key: Array, data: Array) -> Array:
    return _blocks(key, 1, _FOLD_IN, jnp.reshape(jnp.asarray(data).astype(jnp.uint32), (1,)))[0]


_UINT = {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32, 64: jnp.uint64}


@functools.partial(jax.jit, static_argnums=(1, 2), inline=True)
def _random_bits_jit(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    words = math.prod(shape) * (2 if bit_width == 64 else 1)
    flat = _blocks(key, -(-words // 4), _RANDOM_BITS).reshape(-1)[:words]
    if bit_width == 64:
        pairs = flat.reshape(shape + (2,)).astype(jnp.uint64)
        return (pairs[..., 0] << np.uint64(32)) | pairs[..., 1]
    return flat.reshape(shape).astype(_UINT[bit_width])


def _random_bits(key: Array, bit_width: int, shape) -> Array:
    if bit_width not in _UINT:
        raise TypeError(f"{SECURE_IMPL}: bit_width must be 8, 16, 32 or 64; got {bit_width}")
    shape = tuple(int(d) for d in shape)
    _check_count(-(-math.prod(shape) * (2 if bit_width == 64 else 1) // 4), "random_bits")
    return _random_bits_jit(key, bit_width, shape)


#: The JAX PRNG implementation of the secure generator (pass as ``impl=`` to JAX's key
#: functions; ``jax.random.key(seed, impl=SECURE_SPEC)`` refuses).
SECURE_SPEC = define_prng_impl(
    key_shape=(4,), seed=_seed, split=_split, random_bits=_random_bits, fold_in=_fold_in,
    name=SECURE_IMPL, tag="ls128",
)

# Why the other generators cannot hold a release key (what secure_key(impl) answers).
_NARROW = {
    "rbg": "it holds 128 bits of key data, but its split and fold_in act on two independent "
           "64-bit threefry2x32 halves and its bits come from the backend's RngBitGenerator, "
           "whose key strength ldpjax does not control",
    "threefry4x32": "its keys hold 128 bits, but its split and fold_in read the same counters "
                    "(fold_in(k, i) equals split(k, n)[i], so two draws of a run can share "
                    "their noise) and XLA CPU compiles it for minutes inside a scan",
}
_NARROW["unsafe_rbg"] = _NARROW["rbg"]


def impl_name(key: PRNGKey) -> str:
    """The generator name of a typed key (``"threefry2x32"``, ``"ldpjax_secure128"``, ...).

    Example:
      >>> impl_name(secure_key())
      'ldpjax_secure128'
    """
    impl = jax.random.key_impl(key)
    if isinstance(impl, str):
        return impl
    inner = getattr(impl, "_impl", None)
    return str(getattr(inner, "name", impl))


def is_secure_key(key: object) -> bool:
    """True for a typed key of the secure generator (:data:`SECURE_IMPL`), concrete or traced.

    A key of that generator is made only by :func:`secure_key` and what JAX derives from one
    (``split``, ``fold_in``): it has no seed. (Wrapping words of your own with
    ``jax.random.wrap_key_data(..., impl=SECURE_SPEC)`` would defeat this test: don't.)

    Example:
      >>> import jax
      >>> is_secure_key(secure_key()), is_secure_key(jax.random.key(0))
      (True, False)
    """
    if not isinstance(key, jax.Array) or not jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return False
    return impl_name(key) == SECURE_IMPL


def _describe(key: object) -> str:
    if isinstance(key, jax.Array) and jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return f"a {impl_name(key)} key"
    if isinstance(key, (jax.Array, np.ndarray)):
        return f"a raw {key.dtype} array (a legacy key made from a seed)"
    return f"{type(key).__name__} {key!r}"


def require_secure_key(key: object, where: str) -> None:
    """Raise ``ValueError`` unless ``key`` is a secure key (:func:`is_secure_key`).

    The check of every entry point that is safe for real data: a key made from a seed
    (``make_key(0)``, ``jax.random.key(0)``) lets anyone who knows the seed replay the noise.

    Args:
      key: the key given to the release.
      where: the caller's name, for the message (e.g. ``"release_run"``).

    Example:
      >>> import jax
      >>> require_secure_key(secure_key(), "my_release")
      >>> require_secure_key(jax.random.key(0), "my_release")
      Traceback (most recent call last):
      ...
      ValueError: my_release: key must come from ldpjax.mechanisms.secure_key() (128 bits from the OS CSPRNG, generator ldpjax_secure128); got a threefry2x32 key: a key made from a seed makes the noise replayable by anyone who knows the seed (simulations use ldpjax.engine.simulate)
    """
    if not is_secure_key(key):
        raise ValueError(
            f"{where}: key must come from ldpjax.mechanisms.secure_key() ({SECURE_KEY_BITS} bits "
            f"from the OS CSPRNG, generator {SECURE_IMPL}); got {_describe(key)}: a key made from "
            "a seed makes the noise replayable by anyone who knows the seed (simulations use "
            "ldpjax.engine.simulate)"
        )


def _key_bits(impl: str) -> int:
    return 32 * int(np.prod(jax.random.key_data(jax.random.key(0, impl=impl)).shape))


def secure_key(impl: str | None = None) -> PRNGKey:
    """A fresh key of 128 bits from the operating system's CSPRNG (for releases of real data).

    The key's four uint32 words are ``secrets.token_bytes(16)``; its generator is
    :data:`SECURE_IMPL` (Threefry-4x32-20 with a 128-bit key, see the module docstring), which
    keeps all 128 bits through ``split`` and ``fold_in``.

    Args:
      impl: ``None`` or ``"ldpjax_secure128"``. Any other generator is refused: its keys hold
        fewer than 128 bits (philox2x32: 32; threefry2x32, philox4x32: 64), which a search over
        every key can recover, or (rbg, unsafe_rbg, threefry4x32) its key derivation does not
        keep 128 independent bits.

    Returns:
      A typed JAX key (``jax.random.key_data`` of shape (4,)). Two calls share a key with
      probability 2^-128.

    Raises:
      ValueError: naming ``impl`` and why it cannot hold a release key.

    Example:
      >>> import jax
      >>> k1, k2 = secure_key(), secure_key()
      >>> jax.random.key_data(k1).shape, bool((jax.random.key_data(k1) != jax.random.key_data(k2)).any())
      ((4,), True)
    """
    if impl is not None and impl != SECURE_IMPL:
        if not isinstance(impl, str):
            raise ValueError(f"impl must be None or {SECURE_IMPL!r}; got {impl!r}")
        name = ALIASES.get(impl, impl)
        if name in _NARROW:
            why = _NARROW[name]
        else:
            try:
                bits = _key_bits(name)
            except (ValueError, TypeError, KeyError):
                raise ValueError(
                    f"impl must be None or {SECURE_IMPL!r}; got an unknown generator {impl!r}"
                ) from None
            why = (f"its keys hold {bits} bits, and a search over all 2^{bits} keys recovers "
                   "the key and replays every draw")
        raise ValueError(
            f"impl={impl!r} cannot hold a release key: {why}; use secure_key() (generator "
            f"{SECURE_IMPL}: {SECURE_KEY_BITS} bits that split and fold_in keep)"
        )
    words = np.frombuffer(secrets.token_bytes(SECURE_KEY_BITS // 8), dtype=np.uint32).copy()
    return jax.random.wrap_key_data(words, impl=SECURE_SPEC)


__all__ = [
    "ROUNDS",
    "SECURE_IMPL",
    "SECURE_KEY_BITS",
    "SECURE_SPEC",
    "impl_name",
    "is_secure_key",
    "require_secure_key",
    "secure_key",
    "threefry4x32",
]
