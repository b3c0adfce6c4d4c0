"""Double-word ("float-float") arithmetic for the integer thresholds of the K-ary mechanisms.

A value is a pair ``(hi, lo)`` of floats of one dtype (float32, or float64 under x64) with
``hi = fl(hi + lo)``: about twice the significand bits (48 for float32, 106 for float64), so
2^32 / (K - 1 + e^xi) is known to far better than one part in 2^32 without 64-bit types. The
algorithms are those of Dekker ("A floating-point technique for extending the available
precision", Numerische Mathematik 1971) and Knuth (TAOCP vol. 2, Sec. 4.2.2), in the form of
Hida, Li & Bailey's double-double library ("Algorithms for quad-double precision floating
point arithmetic", ARITH 2001), with one change that makes them immune to a compiler's fused
multiply-add contraction: every product is formed from halves split by *integer* bit
operations (:func:`split`), so each partial product is exact in the working format and a fused
or unfused evaluation rounds the same sums, and every rounded sum passes an optimisation
barrier, so that XLA cannot reassociate it with a constant operand (it rewrites (b + c) - c as
b when c is a compile-time constant, e.g. a literal budget).

Error bounds (u = 2^-24 in float32, 2^-53 in float64; for non-negative operands, which is how
the mechanisms use them): :func:`two_sum` and :func:`two_prod` are exact up to the final
renormalisation (relative error <= 4 u^2 for ``two_prod``); :func:`add`, :func:`mul` and
:func:`mul_float` have relative error <= 8 u^2; :func:`div` <= 16 u^2; :func:`expm1`, for
x in [0, 88] (float32) / [0, 700] (float64), <= 64 u^2 (Cody-Waite reduction x = n ln 2 + r
with an exact first step, a Taylor series of expm1(r) on [0, ln 2) truncated below u^2 / 4, and
2^n (1 + expm1(r)) - 1 reassembled without cancellation). :func:`ceil_to_uint32` then rounds
up with a caller-given margin, so a result is never below the exact ceiling.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.types import Array

#: (unsigned type, bits cleared by the split, Taylor terms of expm1, Cody-Waite bits of ln 2)
_FORMATS = {
    "float32": (jnp.uint32, 12, 15, 16),
    "float64": (jnp.uint64, 27, 27, 42),
}
#: Unit roundoff of each working format.
UNIT = {"float32": 2.0**-24, "float64": 2.0**-53}
#: 50 digits of ln 2 (mpmath.log(2)), exact enough for both formats' three-part splits.
_LN2 = Fraction("0.69314718055994530941723212145817656807550013436025")


def _fmt(dtype) -> str:
    return str(jnp.dtype(dtype))


def constant(value: Fraction | float, dtype) -> tuple[Array, Array]:
    """The double-word pair nearest a Python rational (hi rounded, lo the rounded rest)."""
    name = _fmt(dtype)
    cast = float if name == "float64" else (lambda x: float(np.float32(x)))
    value = Fraction(value)
    hi = cast(float(value))
    lo = cast(float(value - Fraction(hi)))
    return jnp.asarray(hi, dtype), jnp.asarray(lo, dtype)


def split(a: Array) -> tuple[Array, Array]:
    """a = hi + lo exactly, hi rounded to half the significand by integer bit operations.

    float32: hi has 12 significant bits and |lo| <= 2^-12 |hi|; float64: 26 and 2^-26. Products
    of halves are exact in the working format (no fused multiply-add can change them).
    """
    utype, cleared, _, _ = _FORMATS[_fmt(a.dtype)]
    bits = jax.lax.bitcast_convert_type(a, utype)
    half = jnp.asarray(1 << (cleared - 1), utype)
    mask = jnp.asarray(~((1 << cleared) - 1) & ((1 << (8 * jnp.dtype(utype).itemsize)) - 1), utype)
    hi = jax.lax.bitcast_convert_type((bits + half) & mask, a.dtype)
    return hi, a - hi


def _opaque(x: Array) -> Array:
    """x, hidden from XLA's algebraic simplifier: with a constant operand it rewrites
    (b + c) - c as b (reassociation), which is not exact in floating point and would zero the
    error terms below. An optimisation barrier keeps the rounded sum as computed."""
    return jax.lax.optimization_barrier(x)


def two_sum(a: Array, b: Array) -> tuple[Array, Array]:
    """s + e = a + b exactly, s = fl(a + b) (Knuth; no condition on the magnitudes)."""
    s = _opaque(a + b)
    bb = _opaque(s - a)
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a: Array, b: Array) -> tuple[Array, Array]:
    """s + e = a + b exactly, for |a| >= |b| (Dekker)."""
    s = _opaque(a + b)
    return s, b - (s - a)


def two_prod(a: Array, b: Array) -> tuple[Array, Array]:
    """a b as a double word from the four exact partial products of the split halves."""
    ah, al = split(a)
    bh, bl = split(b)
    s, e1 = two_sum(ah * bh, ah * bl)
    s, e2 = two_sum(s, al * bh)
    return fast_two_sum(s, e1 + e2 + al * bl)


def add(x, y):
    """x + y (double words)."""
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = fast_two_sum(s, e + t)
    return fast_two_sum(s, e + f)


def neg(x):
    return -x[0], -x[1]


def mul(x, y):
    """x y (double words)."""
    p, e = two_prod(x[0], y[0])
    return fast_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def mul_float(x, b: Array):
    """x b for a double word x and a float b."""
    p, e = two_prod(x[0], b)
    return fast_two_sum(p, e + x[1] * b)


def div(x, y):
    """x / y (double words, y > 0): three quotient digits with exact residuals."""
    q1 = x[0] / y[0]
    r = add(x, neg(mul_float(y, q1)))
    q2 = r[0] / y[0]
    r = add(r, neg(mul_float(y, q2)))
    q3 = r[0] / y[0]
    return add(fast_two_sum(q1, q2), (q3, jnp.zeros_like(q3)))


def _pow2(n: Array, dtype) -> Array:
    """2^n for integer-valued float n in the normal range, built from its exponent bits."""
    utype, _, _, _ = _FORMATS[_fmt(dtype)]
    mantissa_bits = 23 if _fmt(dtype) == "float32" else 52
    bias = 127 if _fmt(dtype) == "float32" else 1023
    exponent = (n.astype(jnp.int32) + bias).astype(utype)
    return jax.lax.bitcast_convert_type(exponent << jnp.asarray(mantissa_bits, utype), dtype)


def expm1(x: Array):
    """e^x - 1 as a double word, for float x in [0, 88] (float32) or [0, 700] (float64).

    Cody-Waite: n = floor(x / ln 2) and r = x - n ln 2 with ln 2 = L1 + L2 + L3, L1 short
    enough that n L1 and x - n L1 are exact (Sterbenz), so r carries only the double-word
    error of the small terms; expm1(r) by Horner over 1/k! (truncation below u^2 / 4 on
    [0, ln 2)); then e^x - 1 = 2^n expm1(r) + (2^n - 1), a sum of non-negative terms.
    """
    dtype = x.dtype
    _, _, terms, l1_bits = _FORMATS[_fmt(dtype)]
    scale = 2 ** (l1_bits - 1)
    l1 = Fraction(math.floor(_LN2 * scale), scale)  # l1_bits significant bits
    l2_hi, l2_lo = constant(_LN2 - l1, dtype)
    n = jnp.floor(x * jnp.asarray(float(1 / _LN2), dtype))
    reduced = x - n * jnp.asarray(float(l1), dtype)  # exact (Sterbenz)
    r = add((reduced, jnp.zeros_like(x)), neg(two_prod(n, l2_hi)))
    r = add(r, (-(n * l2_lo), jnp.zeros_like(x)))
    # Horner over the coefficients 1/k!, k = terms - 1 .. 1: sum_{k>=1} r^(k-1) / k! (a loop,
    # not unrolled: one copy of the double-word step in the compiled program)
    pairs = [constant(Fraction(1, math.factorial(k)), dtype) for k in range(terms - 1, 0, -1)]
    table = (jnp.stack([c[0] for c in pairs]), jnp.stack([c[1] for c in pairs]))

    def horner(i, series):
        return add(mul(series, r), (table[0][i] + jnp.zeros_like(x), table[1][i]
                                    + jnp.zeros_like(x)))

    last = constant(Fraction(1, math.factorial(terms)), dtype)
    start = (last[0] + jnp.zeros_like(x), last[1] + jnp.zeros_like(x))
    series = jax.lax.fori_loop(0, terms - 1, horner, start)
    m = mul(series, r)  # expm1(r)
    p2 = _pow2(n, dtype)
    return add((m[0] * p2, m[1] * p2), two_sum(p2, -jnp.ones_like(p2)))


def ceil_to_uint32(x, margin: Array) -> tuple[Array, Array]:
    """(ceil(hi + lo + margin) as uint32, whether it is >= 2^32), for 0 <= hi + lo < 2^33.

    The integer and fractional parts are taken apart exactly; the only rounding is that of the
    fractional sum (below 2^-16 in float32), which ``margin`` must cover: the result is then
    never below the ceiling of the exact value, and above it only where the value lies within
    ``margin`` of an integer. A result >= 2^32 is reported as the flag (value 2^32 - 1).
    """
    hi, lo = add(x, (margin, jnp.zeros_like(margin)))
    whole = jnp.floor(hi)
    lo_whole = jnp.floor(lo)
    fraction = (hi - whole) + (lo - lo_whole)  # in [0, 2], one rounding
    top = jnp.floor(whole * 2.0**-16)  # whole = top 2^16 + bottom, both exact
    bottom = whole - top * 2.0**16
    low = (bottom.astype(jnp.int32) + lo_whole.astype(jnp.int32)
           + jnp.ceil(fraction).astype(jnp.int32))  # in (-2^8, 2^16 + 2^8)
    top_i = top.astype(jnp.int32)
    over = (top_i >= 2**16) & ((top_i - 2**16) * 2**16 + low >= 0)
    value = (top_i.astype(jnp.uint32) << 16) + low.astype(jnp.uint32)  # modulo 2^32
    return jnp.where(over, jnp.uint32(2**32 - 1), value), over


__all__ = [
    "UNIT",
    "add",
    "ceil_to_uint32",
    "constant",
    "div",
    "expm1",
    "fast_two_sum",
    "mul",
    "mul_float",
    "neg",
    "split",
    "two_prod",
    "two_sum",
]
