"""Release keys cannot shrink, and the release entry point refuses seeds and simulation paths.

* the secure generator is Threefry-4x32-20: checked against Random123's published known-answer
  vectors and against a pure-Python Threefry-4x32 written here (integers mod 2^32), which also
  pins which counters ``random_bits``, ``split`` and ``fold_in`` read;
* ``secure_key()`` holds 128 bits from ``secrets.token_bytes``; narrower generators are refused;
* every mechanism runs with a secure key under ``jit`` and ``vmap`` (float32 and x64);
* ``release`` refuses seeded keys, the float paths and unregistered (simulation) mechanisms.
"""

from __future__ import annotations

import secrets

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import mechanisms as M
from ldpjax.engine import make_key
from ldpjax.mechanisms import secure as S
from ldpjax.mechanisms.binomial import binomial
from ldpjax.mechanisms.release import register_release, registered, release

MASK = 2**32 - 1
ROT = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))


def _threefry4x32_reference(key, counter, rounds=20):
    """Threefry-4x32 on Python integers (Salmon et al., SC 2011; Random123's threefry.h)."""
    ks = list(key) + [key[0] ^ key[1] ^ key[2] ^ key[3] ^ 0x1BD11BDA]
    x = [(c + k) & MASK for c, k in zip(counter, ks, strict=False)]
    rotl = lambda v, d: ((v << d) | (v >> (32 - d))) & MASK  # noqa: E731
    for r in range(rounds):
        a, b = ROT[r % 8]
        if r % 2 == 0:
            x[0] = (x[0] + x[1]) & MASK
            x[1] = rotl(x[1], a) ^ x[0]
            x[2] = (x[2] + x[3]) & MASK
            x[3] = rotl(x[3], b) ^ x[2]
        else:
            x[0] = (x[0] + x[3]) & MASK
            x[3] = rotl(x[3], a) ^ x[0]
            x[2] = (x[2] + x[1]) & MASK
            x[1] = rotl(x[1], b) ^ x[2]
        if r % 4 == 3:
            j = r // 4 + 1
            x = [(x[i] + ks[(j + i) % 5]) & MASK for i in range(4)]
            x[3] = (x[3] + j) & MASK
    return x


PI_CTR = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)
PI_KEY = (0xA4093822, 0x299F31D0, 0x082EFA98, 0xEC4E6C89)
# Random123 tests/kat_vectors: "threefry4x32 R counter key -> output"
KAT = [
    (20, (0,) * 4, (0,) * 4, (0x9C6CA96A, 0xE17EAE66, 0xFC10ECD4, 0x5256A7D8)),
    (20, (MASK,) * 4, (MASK,) * 4, (0x2A881696, 0x57012287, 0xF6C7446E, 0xA16A6732)),
    (20, PI_CTR, PI_KEY, (0x59CD1DBB, 0xB8879579, 0x86B5D00C, 0xAC8B6D84)),
    (72, PI_CTR, PI_KEY, (0x09930ADF, 0x7F27BD55, 0x9ED68CE1, 0x97F803F6)),
]
FIXED = (0x01234567, 0x89ABCDEF, 0xDEADBEEF, 0x0BADF00D)  # fixed key words: reproducible tests


def _fixed_key(words=FIXED):
    # a secure-generator key with known words (tests only: real keys come from secure_key())
    return jax.random.wrap_key_data(jnp.asarray(np.array(words, np.uint32)), impl=S.SECURE_SPEC)


@pytest.mark.parametrize("rounds,counter,key,expected", KAT)
def test_threefry4x32_matches_random123_known_answers(rounds, counter, key, expected):
    assert tuple(_threefry4x32_reference(key, counter, rounds)) == expected
    got = S.threefry4x32(np.array(key, np.uint32), np.array(counter, np.uint32), rounds)
    assert tuple(int(w) for w in np.asarray(got)) == expected


def test_generator_reads_the_documented_counters(x64):
    """random_bits: words of F(j, 0, 0, 0); split child i: F(i, 0, 0, 1); fold_in(d): F(d, 0, 0,
    2) -- from the pure-Python reference, so the three uses never share a block."""
    key = _fixed_key()
    ref = lambda c0, tag: _threefry4x32_reference(FIXED, (c0, 0, 0, tag))  # noqa: E731
    bits = np.asarray(jax.random.bits(key, (6,), jnp.uint32)).tolist()
    assert bits == (ref(0, 0) + ref(1, 0))[:6]
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.split(key, 3)),
        np.array([ref(i, 1) for i in range(3)], np.uint32),
    )
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.fold_in(key, 5)), np.array(ref(5, 2), np.uint32)
    )
    wide = np.asarray(jax.random.bits(key, (2,), jnp.uint64)).tolist()  # x64: two words each
    words = ref(0, 0)
    assert wide == [(words[0] << 32) | words[1], (words[2] << 32) | words[3]]
    # no child equals another operation's block (JAX's threefry4x32: fold_in(k, 1) == split[1])
    assert not np.array_equal(
        jax.random.key_data(jax.random.fold_in(key, 1)),
        jax.random.key_data(jax.random.split(key, 2))[1],
    )


def test_secure_key_holds_128_bits_from_the_os_csprng(monkeypatch):
    k1, k2 = M.secure_key(), M.secure_key()
    assert jax.random.key_data(k1).shape == (4,) and jax.random.key_data(k1).dtype == jnp.uint32
    assert not np.array_equal(jax.random.key_data(k1), jax.random.key_data(k2))
    assert S.impl_name(k1) == "ldpjax_secure128" and S.is_secure_key(k1)
    requested = []

    def token_bytes(n):
        requested.append(n)
        return bytes(range(1, n + 1))

    monkeypatch.setattr(secrets, "token_bytes", token_bytes)
    key = M.secure_key()
    assert requested == [16]  # 128 bits, all of the key
    np.testing.assert_array_equal(
        np.asarray(jax.random.key_data(key)), np.frombuffer(bytes(range(1, 17)), np.uint32)
    )
    # every derived key is a full 128-bit block again (never narrowed by split / fold_in)
    derived = jax.random.key_data(jax.random.fold_in(jax.random.split(key)[1], 7))
    assert derived.shape == (4,) and S.is_secure_key(jax.random.fold_in(key, 7))


@pytest.mark.parametrize(
    "impl",
    ["philox2x32", "threefry2x32", "philox4x32", "rbg", "unsafe_rbg", "threefry4x32", "threefry"],
)
def test_secure_key_refuses_every_narrower_generator(impl):
    with pytest.raises(ValueError, match=rf"impl={impl!r}.*128 bits"):
        M.secure_key(impl)


def test_the_secure_generator_has_no_seed():
    with pytest.raises(ValueError, match="never made from a seed.*secure_key"):
        jax.random.key(0, impl=S.SECURE_SPEC)
    with pytest.raises(ValueError, match="has no seed"):
        make_key(0, "ldpjax_secure128")


def test_secure_bits_are_uniform():
    # 2^16 words from a fixed key: each of the 32 bit positions is Binomial(2^16, 1/2), sd 128;
    # 6 sd = 768 (32 positions, two-sided: false alarm < 1e-7). Byte values: 256 cells of
    # Binomial(2^18, 1/256), sd 31.9; 6 sd = 192.
    words = np.asarray(jax.jit(lambda k: jax.random.bits(k, (2**16,), jnp.uint32))(_fixed_key()))
    ones = ((words[:, None] >> np.arange(32, dtype=np.uint32)) & 1).sum(0).astype(np.int64)
    assert np.all(np.abs(ones - 2**15) < 768), ones
    counts = np.bincount(words.view(np.uint8), minlength=256)
    assert np.all(np.abs(counts - 2**10) < 192)


def _mechanisms():
    # 63 entries each: with a secure (random) key the check below that four keys give four
    # different releases must not flake; four releases of 63 bits at r = 0.5 all agree with
    # probability below 0.32^63 (three bits: 3%)
    x = jnp.tile(jnp.array([0.25, 0.5, 0.75]), 21)
    bits, cats = jnp.tile(jnp.array([0, 1, 1]), 21), jnp.tile(jnp.array([0, 2, 1]), 21)
    return {
        "gaussian float": lambda k: M.gaussian_mechanism(k, x, 1.0, 1.0),
        "gaussian granular": lambda k: M.gaussian_mechanism(
            k, x, 1.0, 1.0, domain=(0.0, 1.0), granularity=2**-6
        ),
        "laplace float": lambda k: M.laplace_mechanism(k, x, 1.0, 1.0),
        "laplace granular": lambda k: M.laplace_mechanism(k, x, 1.0, 1.0, granularity=2**-6),
        "discrete_gaussian": lambda k: M.discrete_gaussian(k, 3.0, (63,)).astype(float),
        "discrete_laplace": lambda k: M.discrete_laplace(k, 3, (63,)).astype(float),
        "randomized_response": lambda k: M.randomized_response(k, bits, 0.5).astype(float),
        "randomized_response_bernoulli": lambda k: M.randomized_response_bernoulli(
            k, jnp.tile(jnp.array([0.2, 0.5, 0.9]), 21), 0.5
        ).astype(float),
        "kary_randomized_response": lambda k: M.kary_randomized_response(k, cats, 1.0, 3).astype(
            float
        ),
        "kary_randomized_response_explore": lambda k: M.kary_randomized_response_explore(
            k, cats, 0.3, 3
        ).astype(float),
        "kary_randomized_response_counts": lambda k: M.kary_randomized_response_counts(
            k, 1000, 1, 0.3, jnp.ones(3) / 3
        ),
        "report_bits": lambda k: M.report_bits(k, (63,)).astype(float),
        "binomial": lambda k: binomial(k, jnp.tile(jnp.array([5, 10, 20]), 21), 0.3).astype(float),
    }


def _runs_with_secure_keys(names):
    keys = jax.random.split(M.secure_key(), 4)
    mechanisms = _mechanisms()
    for name in names:
        out = np.asarray(jax.jit(jax.vmap(mechanisms[name]))(keys))
        assert out.shape[0] == 4 and np.all(np.isfinite(out)), name
        assert not np.all(out == out[0]), name  # four keys, four different releases


FAST = ("gaussian float", "randomized_response", "kary_randomized_response_explore")


def test_mechanisms_run_with_a_secure_key_under_jit_and_vmap():
    _runs_with_secure_keys(FAST)  # the fast representatives; every mechanism: the slow test


@pytest.mark.slow
@pytest.mark.parametrize("x64_mode", [False, True], ids=["float32", "x64"])
def test_every_mechanism_runs_with_a_secure_key_under_jit_and_vmap(x64_mode):
    with jax.enable_x64(x64_mode):
        _runs_with_secure_keys(tuple(_mechanisms()))


# --------------------------------------------------------------------------- release
SEEDED = {
    "make_key(0)": lambda: make_key(0),
    "jax.random.key(0)": lambda: jax.random.key(0),
    "legacy uint32": lambda: jax.random.PRNGKey(0),
}


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_release_refuses_seeded_keys(name):
    with pytest.raises(
        ValueError,
        match=r"release: key must come from "
        r"ldpjax\.mechanisms\.secure_key\(\)",
    ):
        release(M.randomized_response, SEEDED[name](), jnp.array([0, 1]), 0.5)


def test_release_refuses_the_float_paths_and_simulation_mechanisms():
    key, x = M.secure_key(), jnp.array([0.2, 0.9])
    with pytest.raises(ValueError, match="gaussian_mechanism without granularity"):
        release(M.gaussian_mechanism, key, x, 1.0, 1.0)
    with pytest.raises(ValueError, match="gaussian_mechanism without granularity"):
        release(M.gaussian_mechanism, key, x, 1.0, 1.0, domain=(0.0, 1.0), granularity=None)
    with pytest.raises(ValueError, match="laplace_mechanism without granularity"):
        release(M.laplace_mechanism, key, x, 1.0, 1.0)
    for fn, args in (
        (M.randomized_response_bernoulli, (x, 0.5)),
        (M.kary_randomized_response_counts, (10, 1, 0.3, jnp.ones(3) / 3)),
        (M.discrete_gaussian, (3.0, (2,))),
    ):
        with pytest.raises(ValueError, match=f"{fn.__name__} is a simulation path"):
            release(fn, key, *args)


@pytest.mark.slow
def test_release_runs_the_granular_paths():
    key, x = M.secure_key(), jnp.array([0.2, 0.9])
    out = release(M.gaussian_mechanism, key, x, 1.0, 1.0, domain=(0.0, 1.0), granularity=2**-10)
    np.testing.assert_array_equal(out * 2**10, jnp.round(out * 2**10))  # on the grid
    out = release(M.laplace_mechanism, key, x, 1.0, 1.0, granularity=2**-10)
    np.testing.assert_array_equal(out * 2**10, jnp.round(out * 2**10))


def test_release_runs_the_real_data_paths():
    key = M.secure_key()
    assert release(M.randomized_response, key, jnp.array([0, 1]), 0.5).shape == (2,)
    assert release(M.kary_randomized_response, key, jnp.array([0, 2]), 1.0, 3).shape == (2,)
    assert release(M.kary_randomized_response_explore, key, jnp.array([0, 2]), 0.3, 3).shape == (2,)
    # the same call as the mechanism itself, under the same key
    np.testing.assert_array_equal(
        release(M.randomized_response, key, jnp.array([0, 1]), 0.5),
        M.randomized_response(key, jnp.array([0, 1]), 0.5),
    )
    for name in (
        "gaussian_mechanism",
        "laplace_mechanism",
        "randomized_response",
        "kary_randomized_response",
        "kary_randomized_response_explore",
    ):
        assert name in registered()


def test_register_release_admits_a_mechanism_with_its_check():
    def clipped_rr(key, bit, r, *, clip=True):
        return M.randomized_response(key, bit, r)

    def needs_clip(arguments):
        if not arguments["clip"]:
            raise ValueError("clipped_rr needs clip=True")

    with pytest.raises(ValueError, match="simulation path"):
        release(clipped_rr, M.secure_key(), jnp.array([1]), 0.5)
    register_release(clipped_rr, needs_clip)
    assert release(clipped_rr, M.secure_key(), jnp.array([1]), 0.5).shape == (1,)
    with pytest.raises(ValueError, match="needs clip=True"):
        release(clipped_rr, M.secure_key(), jnp.array([1]), 0.5, clip=False)
    with pytest.raises(ValueError, match="key must come from"):
        release(clipped_rr, make_key(0), jnp.array([1]), 0.5)


def test_require_secure_key_tells_secure_keys_apart_under_jit():
    assert jax.jit(lambda k: jnp.asarray(S.is_secure_key(k)))(M.secure_key())
    assert not S.is_secure_key(make_key(0)) and not S.is_secure_key(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"my_release: .*got a (philox4x32|threefry2x32) key"):
        S.require_secure_key(make_key(0), "my_release")
    with pytest.raises(ValueError, match=r"got a raw uint32 array"):
        S.require_secure_key(jax.random.PRNGKey(0), "my_release")
