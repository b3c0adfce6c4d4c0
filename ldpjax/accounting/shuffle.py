"""Privacy amplification by shuffling: n reports of an eps0-LDP randomizer, shuffled.

Each of n users applies an eps0-DP local randomizer to their record and a shuffler releases the
multiset of reports. Feldman, McMillan & Talwar ("Hiding Among the Clones: A Simple and Nearly
Optimal Analysis of Privacy Amplification by Shuffling", FOCS 2021) show that the shuffled
release is (eps, delta)-DP with respect to one record whenever the pair

    C ~ Bin(n - 1, p),  A ~ Bin(C, 1/2),  Delta ~ Bern(alpha),  alpha = e^eps0 / (e^eps0 + 1),
    P = (A + Delta, C - A + 1 - Delta),  Q = (A + 1 - Delta, C - A + Delta)

is (eps, delta)-indistinguishable (their Theorem 3.2), with clone probability p = e^-eps0: each
other user's report is, with probability p, a "clone" of the distinguished user's report on one
of the two neighbouring records. The same reduction holds with any clone probability p for
which every other user's report law R(x) dominates p (R(x1) + R(x1')) / 2 pointwise. For binary
and K-ary randomized response (report the true category with probability e^eps0 q, each other
one with probability q) that holds with p = 2 / (e^eps0 + 1): at the output x1 the law of a
user with another record has mass q = (e^eps0 q + q) / (e^eps0 + 1), and at every other output
at least q. This is the "stronger clone" of Feldman, McMillan & Talwar ("Stronger Privacy
Amplification by Shuffling for Renyi and Approximate Differential Privacy", SODA 2023), whose
erratum restricts its general statement to a class of randomizers; for randomized response it
holds as just shown (``randomizer="randomized_response"``).

**The numerical bound** (:func:`shuffle_delta`, :func:`shuffle_epsilon`, :class:`ShuffledEvent`).
C is a function of the release (the two counts sum to C + 1), so with b_c the Bin(c, 1/2) pmf
and F_c its cdf

    delta(eps) = sum_c P(C = c) D_c(eps),   D_c = sum_k max(0, P_c(k) - e^eps Q_c(k))

where P_c(k) = alpha b_c(k - 1) + (1 - alpha) b_c(k) and Q_c(k) = (1 - alpha) b_c(k - 1) +
alpha b_c(k) are the laws of the first count given C = c. The mirror k -> c + 1 - k swaps P_c
and Q_c, so D_c is the same both ways; summed from Q_c's side, whose likelihood ratio to P_c
decreases in k, D_c = sum_(k <= t) (Q_c(k) - e^eps P_c(k)) with t = floor((c + 1) rho /
(1 + rho)), rho = (e^eps0 - e^eps) / (e^(eps + eps0) - 1), which is

    D_c = b_c(t) [A1 - (e^eps - 1) F_c(t - 1) / b_c(t)],   A1 = alpha (1 - e^(eps - eps0)),

with the cdf ratio from the continued fraction of the incomplete beta function (modified
Lentz), never from a difference of cdfs. D_c decreases in c (P_(c+1) and Q_(c+1) are P_c and
Q_c plus one independent fair coin, a post-processing), so the sum over c is bounded above in
blocks: a static number K of blocks (default 256) of width m (a power of two) covering
[E C - 8 sd(C), E C + 6 sd(C)] (further down for delta < 1e-10), each block's exact mass (a sum
of log pmfs, N = n - 1) times D at its first c; C below the window counts with D_0 = A1 and C
above it with D at the last block's start, their masses bounded by Chernoff's
exp(-N KL(c / N || p)). On (n, eps0) in {1e3, 1e4, 1e5} x {0.5, 1, 2, 4}, delta = 1e-6, this
costs at most 0.05% of eps against the exact sum. ``bound="lower"`` evaluates D at
each block's last c and drops both tails: a lower bound on the pair's delta, which measures the
blocks' slack (it is not a privacy claim). Where m = 1 the sum is exact. The bound is rounded up
too: the cancelling difference above gets an allowance of 8 ulps of A1 and (2 steps + 16) ulps
plus 4 times the continued fraction's stopping tolerance of the subtracted term, the sum 64
ulps, and a continued fraction that does not converge counts D_c <= A1.

epsilon(delta) solves log delta(eps) = log delta on [0, eps0] by the Illinois variant of
regula falsi (one evaluation a step) and returns the end of the final bracket, a few ulps wide,
at which the bound was evaluated to be at most delta; gradients by the implicit function
theorem (in eps0 and delta; n is a count, held constant). Shuffling is post-processing, so
eps <= eps0 always. The log pmfs use Loader's saddle-point form (stirlerr and bd0; C. Loader,
"Fast and Accurate Computation of Binomial Probabilities", 2000), accurate to a few ulps of
its terms where ``lgamma`` differences of 1e5-sized numbers lose half of float32's digits;
everything sums in log space, so float32 works for any delta. The authors' published
computation (``computeamplification.py``) steps over c in blocks of a fixed size from n / 2
outwards with scipy's cdfs, one point at a time; this one vectorises over (eps0, n), compiles
once for every randomizer and bound, and differentiates.

**The closed form** (:func:`shuffle_epsilon_closed_form`, their Theorem 3.1): for
eps0 <= log(n / (16 log(4 / delta))),

    eps <= log(1 + (1 - e^-eps0) / (1 + e^-(eps0 + e1)) (a + b)),
    a = 8 sqrt(e^eps0 log(4 / delta) / n),  b = 8 e^eps0 / n,  e1 = log(1 + a + b),

the form in the authors' published code; its factor is never below (e^eps0 - 1) /
(e^eps0 + 1), the variant with e1 = 0, so this is the larger of the two readings. Outside that
range, eps0.

Domains: eps0 in [0, inf] (0: delta = 0; inf: no privacy), n an integer >= 1 (at most 2^24 in
float32, 2^53 in float64, where the counts stay exact), delta in [0, 1), eps >= 0. Concrete
values outside raise ``ValueError``; traced ones give NaN, in the gradient too.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import protocol as p
from ldpjax.accounting.gdp import _float, log_probability
from ldpjax.types import Array, ArrayLike

RANDOMIZERS = ("any", "randomized_response")
#: Default number of blocks over the clone count C (static).
BLOCKS = 256
_Z_HIGH = 6.0  # the window reaches E C + 6 sd(C); above it, Chernoff's bound
_Z_DELTA = 8.0  # the window's lower reach below E C, in sd (more for delta < 1e-10)
_CF_STEPS = 4096  # continued-fraction cap (it converges in tens of steps in the tails)
_LOG_HALF = math.log(0.5)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
# stirlerr(k) = lgamma(k + 1) - (k + 1/2) log k + k - log sqrt(2 pi), k = 0..15 (k = 0 unused)
_STIRLERR = np.array([0.0] + [math.lgamma(k + 1.0) - (k + 0.5) * math.log(k) + k
                              - _HALF_LOG_2PI for k in range(1, 16)])


def _max_count(dtype) -> float:
    return float(2 ** (jnp.finfo(dtype).nmant + 1))


# --------------------------------------------------------------------------- binomial pmfs
def _stirlerr(x: Array) -> Array:
    """log Gamma(x + 1) - log(sqrt(2 pi x) (x / e)^x) for integer-valued x >= 1."""
    big = x > 15.0
    safe = jnp.where(big, x, 16.0)
    inv2 = 1.0 / (safe * safe)
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - inv2 / 1188) * inv2) * inv2) * inv2)
    table = jnp.asarray(_STIRLERR, x.dtype)[jnp.clip(x, 0, 15).astype(jnp.int32)]
    return jnp.where(big, series / safe, table)


def _bd0(x: Array, m: Array) -> Array:
    """x log(x / m) + m - x >= 0 (Loader's deviance), for x >= 0, m > 0, without cancellation."""
    d = x - m
    s = x + m
    small = jnp.abs(d) < 0.1 * s
    vv = jnp.where(small, d / jnp.where(s > 0, s, 1.0), 0.0)
    v2 = vv * vv
    poly = jnp.zeros_like(v2)
    for j in range(8, 0, -1):
        poly = poly * v2 + 1.0 / (2 * j + 1)
    series = d * vv + 2.0 * x * vv * v2 * poly
    xs = jnp.where(small | (x <= 0), 1.0, x)
    ms = jnp.where(small, 1.0, m)
    direct = jnp.where(x > 0, xs * jnp.log(xs / ms), 0.0) + m - x
    return jnp.where(small, series, direct)


def _log_pmf(k: Array, n: Array, log_p: Array, log_q: Array) -> Array:
    """log P(Bin(n, p) = k) (-inf outside 0..n), q = 1 - p; Loader's saddle-point form."""
    inside = (k > 0) & (k < n)
    ks = jnp.where(inside, k, 1.0)
    ns = jnp.where(inside, n, 2.0)
    nk = ns - ks
    pos_p = log_p > -jnp.inf
    pos_q = log_q > -jnp.inf
    mp = jnp.where(pos_p, ns * jnp.exp(log_p), 1.0)
    mq = jnp.where(pos_q, ns * jnp.exp(log_q), 1.0)
    core = (_stirlerr(ns) - _stirlerr(ks) - _stirlerr(nk) - _bd0(ks, mp) - _bd0(nk, mq)
            - 0.5 * jnp.log(ks * (nk / ns)) - _HALF_LOG_2PI)
    core = jnp.where(pos_p & pos_q, core, -jnp.inf)
    n_safe = jnp.where(n > 0, n, 0.0)
    at0 = jnp.where(n > 0, n_safe * jnp.where(pos_q, log_q, -1.0), 0.0)
    at0 = jnp.where(pos_q | (n == 0), at0, -jnp.inf)
    at_n = jnp.where(n > 0, n_safe * jnp.where(pos_p, log_p, -1.0), 0.0)
    at_n = jnp.where(pos_p | (n == 0), at_n, -jnp.inf)
    out = jnp.where(k == 0, at0, jnp.where(k == n, at_n, core))
    return jnp.where((k < 0) | (k > n), -jnp.inf, out)


def _log_chernoff(a: Array, n: Array, log_p: Array, log_q: Array) -> Array:
    """log of Chernoff's bound exp(-n KL(a / n || p)) on P(Bin(n, p) <= a) (a <= np) or on
    P(Bin(n, p) >= a) (a >= np): -(bd0(a, np) + bd0(n - a, nq))."""
    mp = n * jnp.exp(log_p)
    mq = n * jnp.exp(log_q)
    return -(_bd0(a, jnp.where(mp > 0, mp, 1.0)) + _bd0(n - a, jnp.where(mq > 0, mq, 1.0)))


# --------------------------------------------------------------------------- continued fraction
def _nonzero(x: Array, tiny: float) -> Array:
    return jnp.where(jnp.abs(x) < tiny, tiny, x)


def _betacf(a: Array, b: Array, x: Array) -> tuple[Array, Array, Array]:
    """The continued fraction of I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * cf (modified Lentz),
    for x < (a + 1) / (a + b + 2). Returns (cf, converged, steps); no derivatives (inputs are
    integers and x = 1/2 here)."""
    a, b, x = (jax.lax.stop_gradient(z) for z in jnp.broadcast_arrays(a, b, x))
    dtype = a.dtype
    tiny = float(jnp.finfo(dtype).tiny) * 1e4
    tol = 8.0 * float(jnp.finfo(dtype).eps)
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    d = 1.0 / _nonzero(1.0 - qab * x / qap, tiny)
    none = jnp.zeros(a.shape, bool)
    start = (jnp.ones((), jnp.int32), jnp.ones_like(a), d, d, none, jnp.zeros_like(a))

    def cond(state):
        return (state[0] <= _CF_STEPS) & ~jnp.all(state[4])

    def body(state):
        m, c, d, h, done, steps = state
        mf = m.astype(dtype)
        aa = mf * (b - mf) * x / ((qam + 2 * mf) * (a + 2 * mf))
        d1 = 1.0 / _nonzero(1.0 + aa * d, tiny)
        c1 = _nonzero(1.0 + aa / c, tiny)
        aa = -(a + mf) * (qab + mf) * x / ((a + 2 * mf) * (qap + 2 * mf))
        d2 = 1.0 / _nonzero(1.0 + aa * d1, tiny)
        c2 = _nonzero(1.0 + aa / c1, tiny)
        step = d2 * c2
        h2 = h * d1 * c1 * step
        keep = done  # a converged entry keeps its value and its own step count
        return (m + 1, jnp.where(keep, c, c2), jnp.where(keep, d, d2), jnp.where(keep, h, h2),
                done | (jnp.abs(step - 1.0) < tol), jnp.where(keep, steps, mf))

    _, _, _, h, done, steps = jax.lax.while_loop(cond, body, start)
    return h, done, steps


# --------------------------------------------------------------------------- the pair's divergence
def _log_expm1(x: Array) -> Array:
    """log(e^x - 1) for x > 0, stable for large and small x."""
    return x + jnp.log(-jnp.expm1(-x))


def _log_divergence(c: Array, eps: Array, eps0: Array, upper: Array) -> Array:
    """log D_c(eps), rounded up (where ``upper``) or down; c (stop-gradient) broadcasts."""
    dtype = eps.dtype
    gap = -jnp.expm1(jnp.minimum(eps - eps0, 0.0))  # 1 - e^(eps - eps0), 0 at eps >= eps0
    a1 = jax.nn.sigmoid(eps0) * gap
    e = jnp.expm1(eps)
    pos = gap > 0
    log_rho = (jnp.log(jnp.where(pos, gap, 1.0)) + eps0
               - _log_expm1(jnp.where(pos, eps + eps0, 1.0)))
    beta = jax.lax.stop_gradient(jax.nn.sigmoid(log_rho))
    t = jnp.clip(jnp.floor((c + 1.0) * beta), 0.0, c)
    log_bt = _log_pmf(t, c, jnp.asarray(_LOG_HALF, dtype), jnp.asarray(_LOG_HALF, dtype))
    tb = jnp.maximum(t, 1.0)
    cf, done, steps = _betacf(c - tb + 1.0, tb, jnp.full_like(c, 0.5))
    ratio = jnp.where(t > 0, 0.5 * t / (c - t + 1.0) * cf, 0.0)  # F_c(t - 1) / b_c(t)
    e_ratio = jnp.where(t > 0, e * ratio, 0.0)  # t = 0 where e^eps overflows
    ulp = float(jnp.finfo(dtype).eps)
    allowance = (4.0 * 8.0 * ulp + (2.0 * steps + 16.0) * ulp) * e_ratio + 8.0 * ulp * a1
    bracket = a1 - e_ratio + jnp.where(upper, allowance, -allowance)
    exact = log_bt + jnp.log(jnp.maximum(bracket, 0.0))
    fallback = jnp.where(upper, jnp.log(jnp.where(pos, a1, 1.0)), -jnp.inf)  # D_c <= A1
    return jnp.where(pos, jnp.where(done, exact, fallback), -jnp.inf)


# --------------------------------------------------------------------------- clone counts
def _clone_logs(eps0: Array, kind: Array) -> tuple[Array, Array]:
    """(log p, log(1 - p)) of the clone probability p (eps0 > 0 finite): e^-eps0 (kind 0) or
    2 / (e^eps0 + 1) (kind 1, randomized response: 1 - p = tanh(eps0 / 2)); log p lowered by 4
    ulps: fewer clones, a larger (safe) delta, whatever the rounding of p."""
    rr = kind > 0
    log_p = jnp.where(rr, math.log(2.0) + jax.nn.log_sigmoid(-eps0), -eps0)
    log_q = jnp.where(rr, jnp.log(jnp.tanh(0.5 * eps0)), jnp.log(-jnp.expm1(-eps0)))
    ulp = float(jnp.finfo(eps0.dtype).eps)
    return log_p - 4.0 * ulp * jnp.maximum(jnp.abs(log_p), 1.0), log_q


def _window(count: Array, log_p: Array, log_q: Array, z_low: Array, blocks: int):
    """Block starts s_0 < ... < s_(K-1) (the last block open-ended) and the width m."""
    mean = count * jnp.exp(log_p)
    sd = jnp.sqrt(mean * jnp.exp(log_q))
    lo = jnp.clip(jnp.floor(mean - z_low * sd), 0.0, count)
    hi = jnp.clip(jnp.ceil(mean + _Z_HIGH * sd), 0.0, count)
    power = jnp.ceil(jnp.log2(jnp.maximum((hi - lo + 1.0) / (blocks - 2), 1.0)))
    width = jnp.round(jnp.exp2(power))  # exp2 is not exact in float64
    lo = width * jnp.floor(lo / width)
    starts = lo[..., None] + width[..., None] * jnp.arange(blocks, dtype=count.dtype)
    return jax.lax.stop_gradient(starts), jax.lax.stop_gradient(width)


@jax.custom_jvp
def _log_block_masses(log_p: Array, log_q: Array, count: Array, starts: Array,
                      width: Array) -> Array:
    """log P(s_i <= C < s_i + m) for the K - 1 regular blocks, summed pmf by pmf."""
    first = starts[..., :-1]
    init = jnp.full(first.shape, -jnp.inf, first.dtype)

    def body(j, acc):
        c = first + j.astype(first.dtype)
        ok = (c <= count[..., None]) & (j.astype(first.dtype) < width[..., None])
        term = _log_pmf(c, count[..., None], log_p[..., None], log_q[..., None])
        return jnp.logaddexp(acc, jnp.where(ok, term, -jnp.inf))

    return jax.lax.fori_loop(0, jnp.max(width).astype(jnp.int32), body, init)


@_log_block_masses.defjvp
def _log_block_masses_jvp(primals, tangents):
    """d P(a <= C <= b) / dp = N (b_(N-1)(a - 1) - b_(N-1)(b)), b_(N-1) the Bin(N - 1, p) pmf."""
    log_p, log_q, count, starts, width = primals
    out = _log_block_masses(*primals)
    first = starts[..., :-1]
    last = jnp.minimum(first + width[..., None] - 1.0, count[..., None])
    lp, lq, n1 = log_p[..., None], log_q[..., None], count[..., None] - 1.0
    rate = (jnp.exp(_log_pmf(first - 1.0, n1, lp, lq) - out)
            - jnp.exp(_log_pmf(last, n1, lp, lq) - out))
    rate = jnp.where(out > -jnp.inf, count[..., None] * rate, 0.0)
    dp = jnp.exp(log_p) * tangents[0]  # dp = p d(log p)
    return out, rate * dp[..., None]


def _terms(eps0: Array, count: Array, z_low: Array, kind: Array, blocks: int,
           upper: Array) -> tuple[Array, Array]:
    """(log weights, points) with delta(eps) = sum_i weight_i D_(point_i)(eps), the sum of the
    block bound (module doc); eps0 finite > 0."""
    log_p, log_q = _clone_logs(eps0, kind)
    starts, width = _window(count, log_p, log_q, z_low, blocks)
    masses = _log_block_masses(log_p, log_q, count, starts, width)
    n_ = count[..., None]
    below = starts[..., 0] - 1.0
    tail_low = jnp.where(below >= 0, _log_chernoff(jnp.maximum(below, 0.0), count, log_p, log_q),
                         -jnp.inf)
    top = starts[..., -1]
    tail_high = jnp.where(top <= count, _log_chernoff(jnp.minimum(top, count), count, log_p,
                                                     log_q), -jnp.inf)
    zero = jnp.zeros_like(n_)
    # upper: the tails (C below the window with D_0 = A1), D at each block's first c;
    # lower: no tails, D at each block's last c
    up = upper[..., None] > 0
    weights = jnp.where(up, jnp.concatenate([tail_low[..., None], masses, tail_high[..., None]],
                                            -1),
                        jnp.concatenate([zero - jnp.inf, masses, zero - jnp.inf], -1))
    ends = jnp.concatenate([starts[..., 1:-1] - 1.0, n_], -1)
    points = jnp.where(up, jnp.concatenate([zero, starts], -1),
                       jnp.concatenate([zero, ends, n_], -1))
    return weights, jnp.minimum(points, n_)


def _log_delta_of(eps: Array, weights: Array, points: Array, eps0: Array, upper: Array) -> Array:
    up = upper > 0
    log_d = _log_divergence(points, eps[..., None], eps0[..., None], up[..., None])
    terms = weights + jnp.where(weights > -jnp.inf, log_d, 0.0)
    out = jax.nn.logsumexp(terms, axis=-1)
    # the rounding of the log pmfs and masses: 64 ulps, relative, up
    return out + jnp.where(up, 64.0 * float(jnp.finfo(eps.dtype).eps), 0.0)


# --------------------------------------------------------------------------- kernels
def _domain(eps0: Array, count: Array) -> Array:
    limit = _max_count(eps0.dtype)
    return (eps0 >= 0) & (count >= 1) & (count == jnp.round(count)) & (count <= limit)


@functools.partial(jax.jit, static_argnames=("blocks",))
def _delta_kernel(eps0: Array, n: Array, eps: Array, kind: Array, upper: Array,
                  blocks: int) -> Array:
    """delta(eps); ``kind`` 0 (any randomizer) or 1 (randomized response), ``upper`` 1 (the
    claim) or 0 (the lower bound): arrays, so that every variant shares one compiled kernel."""
    eps0, n, eps, kind, upper = jnp.broadcast_arrays(*_float(eps0, n, eps, kind, upper))
    valid = _domain(eps0, n) & (eps >= 0)
    finite = valid & (eps0 > 0) & (eps0 < jnp.inf)
    safe_eps0 = jnp.where(finite, eps0, 1.0)
    count = jax.lax.stop_gradient(jnp.where(valid, n, 1.0)) - 1.0
    weights, points = _terms(safe_eps0, count, jnp.full_like(eps0, _Z_DELTA), kind, blocks,
                             upper)
    safe_eps = jnp.where(finite & (eps < safe_eps0), eps, 0.0)
    log_delta = _log_delta_of(safe_eps, weights, points, safe_eps0, upper)
    out = jnp.where(eps < eps0, jnp.minimum(jnp.exp(log_delta), 1.0), 0.0)
    out = jnp.where(eps0 == jnp.inf, jnp.where(eps < jnp.inf, 1.0, 0.0), out)
    out = jnp.where(eps0 == 0, 0.0, out)
    return v.valid_or_nan(valid, out, eps0, eps)


def _residual(eps, weights, points, eps0, log_target, upper):
    return _log_delta_of(eps, weights, points, eps0, upper) - log_target


@jax.custom_jvp
def _solve(weights: Array, points: Array, eps0: Array, log_target: Array, upper: Array) -> Array:
    """The bracket end b where the (decreasing) residual is <= 0, once the bracket [a, b] of
    [0, eps0] is a few ulps wide: the Illinois variant of regula falsi (one evaluation a step;
    the end kept twice has its residual halved), bisecting while an end's residual is infinite.
    The first evaluation is at 0 (if the residual is <= 0 there, eps = 0)."""
    dtype = eps0.dtype
    tol = 4.0 * float(jnp.finfo(dtype).eps)
    tiny = float(jnp.finfo(dtype).tiny)
    inf = jnp.full_like(eps0, jnp.inf)
    start = (jnp.zeros((), jnp.int32), jnp.zeros_like(eps0), eps0, inf, -inf,
             jnp.zeros(eps0.shape, jnp.int32), jnp.zeros_like(eps0))

    def cond(state):
        count, a, b = state[:3]
        return (count < 400) & jnp.any(b - a > tol * b + tiny)

    def body(state):
        count, a, b, fa, fb, side, x = state
        fx = _residual(x, weights, points, eps0, log_target, upper)
        live = b - a > tol * b + tiny
        above = ~(fx <= 0)  # NaN counts as above: the bracket never closes on it
        moved = jnp.where(above, 1, -1)
        a = jnp.where(live & above, x, a)
        fa = jnp.where(live & above, fx, fa)
        b = jnp.where(live & ~above, x, b)
        fb = jnp.where(live & ~above, fx, fb)
        fb = jnp.where(live & (side == 1) & (moved == 1), 0.5 * fb, fb)  # Illinois
        fa = jnp.where(live & (side == -1) & (moved == -1), 0.5 * fa, fa)
        finite = jnp.isfinite(fa) & jnp.isfinite(fb) & (fa > fb)
        secant = b - fb * (b - a) / jnp.where(finite, fb - fa, -1.0)
        inside = finite & (secant > a) & (secant < b)
        x = jnp.where(inside, secant, 0.5 * (a + b))
        return count + 1, a, b, fa, fb, jnp.where(live, moved, side), x

    return jax.lax.while_loop(cond, body, start)[2]


@_solve.defjvp
def _solve_jvp(primals, tangents):
    """Implicit function theorem at the root: eps' = -(df/dargs . args') / (df/deps)."""
    root = _solve(*primals)
    x = jax.lax.stop_gradient(root)
    value, slope = jax.jvp(lambda z: _residual(z, *primals), (x,), (jnp.ones_like(x),))
    _, moved = jax.jvp(lambda *a: _residual(x, *a), primals, tangents)
    ok = jnp.isfinite(value) & (slope < 0) & jnp.isfinite(slope)
    return root, jnp.where(ok, -moved / jnp.where(ok, slope, -1.0), 0.0)


@functools.partial(jax.jit, static_argnames=("blocks",))
def _epsilon_kernel(eps0: Array, n: Array, log_delta: Array, kind: Array, upper: Array,
                    blocks: int) -> Array:
    """eps(delta) at log delta; ``kind`` and ``upper`` as in :func:`_delta_kernel`."""
    eps0, n, log_delta, kind, upper = jnp.broadcast_arrays(
        *_float(eps0, n, log_delta, kind, upper))
    valid = _domain(eps0, n) & (log_delta < 0)
    finite = valid & (eps0 > 0) & (eps0 < jnp.inf) & (log_delta > -jnp.inf)
    safe_eps0 = jnp.where(finite, eps0, 1.0)
    safe_log = jnp.where(finite, log_delta, -1.0)
    count = jax.lax.stop_gradient(jnp.where(valid, n, 1.0)) - 1.0
    # the window of shuffle_delta, reaching further below E C for delta < 1e-10 (Chernoff's
    # tail there is about delta * 1e-4)
    z_low = jnp.clip(jnp.sqrt(-2.0 * safe_log + 2.0 * math.log(1e4)), _Z_DELTA, 40.0)
    weights, points = _terms(safe_eps0, count, jax.lax.stop_gradient(z_low), kind, blocks,
                             upper)
    root = _solve(weights, points, safe_eps0, safe_log, upper)
    eps = jnp.where(root < safe_eps0, root, safe_eps0)  # at eps0: d eps / d eps0 = 1
    eps = jnp.where(finite, eps, jnp.where(log_delta == -jnp.inf, eps0, 0.0))
    eps = jnp.where(eps0 == jnp.inf, jnp.inf, jnp.where(eps0 == 0, 0.0, eps))
    return v.valid_or_nan(valid, eps, eps0, log_delta)


@jax.jit
def _closed_form_kernel(eps0: Array, n: Array, log_delta: Array) -> Array:
    eps0, n, log_delta = jnp.broadcast_arrays(*_float(eps0, n, log_delta))
    valid = _domain(eps0, n) & (log_delta < 0)
    log4d = math.log(4.0) - jnp.where(valid & (log_delta > -jnp.inf), log_delta, -1.0)
    inside = valid & (log_delta > -jnp.inf) & (eps0 < jnp.inf)
    inside = inside & (eps0 <= jnp.log(n / 16.0) - jnp.log(log4d))
    e0 = jnp.where(inside, eps0, 1.0)
    ns = jnp.where(inside, n, 1e6)
    a = 8.0 * jnp.sqrt(jnp.exp(e0) * log4d / ns)
    b = 8.0 * jnp.exp(e0) / ns
    e1 = jnp.log1p(a + b)
    out = jnp.log1p(-jnp.expm1(-e0) / (1.0 + jnp.exp(-(e0 + e1))) * (a + b))
    out = jnp.where(inside, jnp.minimum(out, eps0), eps0)
    return v.valid_or_nan(valid, out, eps0, log_delta)


# --------------------------------------------------------------------------- public functions
def _check_options(randomizer: str, bound: str, blocks: int) -> None:
    if randomizer not in RANDOMIZERS:
        raise ValueError(f"randomizer must be one of {RANDOMIZERS}; got {randomizer!r}")
    if bound not in ("upper", "lower"):
        raise ValueError(f"bound must be 'upper' or 'lower'; got {bound!r}")
    if not isinstance(blocks, (int, np.integer)) or isinstance(blocks, bool) or blocks < 8:
        raise ValueError(f"blocks must be a Python integer >= 8; got {blocks!r}")


def _arrays(dtype, *xs: ArrayLike) -> tuple[Array, ...]:
    """The kernels' arguments as arrays of one (strong) dtype: one compiled kernel per shape,
    whichever way the numbers came."""
    return tuple(jnp.asarray(np.asarray(x) if isinstance(x, (list, tuple)) else x, dtype)
                 for x in xs)


def _check_budget(eps0: ArrayLike, n: ArrayLike, dtype, where: str = "") -> None:
    v.check_range(f"{where}eps0", eps0, 0.0, math.inf)
    v.check_integer(f"{where}n", n, 1, int(_max_count(dtype)))


def shuffle_delta(eps0: ArrayLike, n: ArrayLike, eps: ArrayLike, *, randomizer: str = "any",
                  bound: str = "upper", blocks: int = BLOCKS) -> Array:
    """delta(eps) of n shuffled eps0-LDP reports: the Feldman-McMillan-Talwar pair's
    hockey-stick divergence, bounded from above in blocks (module doc).

    Args:
      eps0: the local budget, in [0, inf].
      n: the number of shuffled reports, an integer >= 1 (<= 2^24 in float32).
      eps: in [0, inf]; broadcasts with ``eps0`` and ``n``.
      randomizer: ``"any"`` (any eps0-LDP randomizer, clone probability e^-eps0) or
        ``"randomized_response"`` (binary or K-ary randomized response, 2 / (e^eps0 + 1)).
      bound: ``"upper"`` (the privacy claim) or ``"lower"`` (the pair's delta from below, to
        measure the blocks' slack; not a claim).
      blocks: number of blocks over the clone count (static).

    Example:
      >>> d = shuffle_delta(4.0, 100_000, 0.2)
      >>> bool(1e-9 < d < 1e-6)  # eps = 0.2 is beyond the eps(1e-6) = 0.170 of this point
      True
    """
    _check_options(randomizer, bound, blocks)
    dtype = jnp.result_type(eps0, n, eps, float)
    _check_budget(eps0, n, dtype)
    v.check_range("eps", eps, 0.0, math.inf)
    args = _arrays(dtype, p.budget_array(eps0), n, eps, RANDOMIZERS.index(randomizer),
                   bound == "upper")
    return _delta_kernel(*args, blocks)


def shuffle_epsilon(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike, *,
                    randomizer: str = "any", bound: str = "upper",
                    blocks: int = BLOCKS) -> Array:
    """The smallest eps (to rounding, from above) with :func:`shuffle_delta` <= ``delta``: the
    central (eps, delta)-DP of n shuffled eps0-LDP reports (Feldman, McMillan & Talwar 2021,
    Theorem 3.2, computed as in the module doc). At most eps0.

    Args:
      eps0: the local budget, in [0, inf].
      n: the number of shuffled reports, an integer >= 1 (<= 2^24 in float32).
      delta: in [0, 1); a concrete delta is logged in float64 (1e-300 works in float32);
        delta = 0 gives eps0.
      randomizer, bound, blocks: as in :func:`shuffle_delta`.

    ``jit``/``vmap``-able, broadcasting over (eps0, n, delta); ``jax.grad`` in eps0 and delta
    through the implicit function theorem.

    Example:
      >>> round(float(shuffle_epsilon(4.0, 100_000, 1e-6)), 3)
      0.17
    """
    _check_options(randomizer, bound, blocks)
    dtype = jnp.result_type(eps0, n, delta, float)
    _check_budget(eps0, n, dtype)
    v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    args = _arrays(dtype, p.budget_array(eps0), n, log_probability(delta, dtype),
                   RANDOMIZERS.index(randomizer), bound == "upper")
    return _epsilon_kernel(*args, blocks)


def shuffle_epsilon_closed_form(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike) -> Array:
    """The closed-form bound of Feldman, McMillan & Talwar 2021 (Theorem 3.1) for n shuffled
    eps0-LDP reports: log(1 + (1 - e^-eps0) / (1 + e^-(eps0 + e1)) (a + b)) with
    a = 8 sqrt(e^eps0 log(4/delta) / n), b = 8 e^eps0 / n, e1 = log(1 + a + b), where
    eps0 <= log(n / (16 log(4 / delta))); eps0 elsewhere. Never below :func:`shuffle_epsilon`
    in practice (the numerical bound is the tighter analysis of the same pair).

    Args: as in :func:`shuffle_epsilon` (delta in [0, 1)).

    Example:
      >>> round(float(shuffle_epsilon_closed_form(4.0, 100_000, 1e-6)), 4)
      0.5378
    """
    dtype = jnp.result_type(eps0, n, delta, float)
    _check_budget(eps0, n, dtype)
    v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    return _closed_form_kernel(*_arrays(dtype, p.budget_array(eps0), n,
                                        log_probability(delta, dtype)))


# --------------------------------------------------------------------------- the event
@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class ShuffledEvent:
    """n reports of an eps0-LDP randomizer, shuffled: the claim for one record of the shuffled
    release (Feldman, McMillan & Talwar 2021), with its own profile ``delta_at`` /
    ``epsilon_at`` (the numerical upper bound of :func:`shuffle_delta` /
    :func:`shuffle_epsilon`). Leaves ``eps0`` in [0, inf] and ``n`` (an integer >= 1);
    ``randomizer`` and ``blocks`` are static. It offers no pure, GDP or zCDP view, so the
    accountants refuse a sequential composition containing it (``NotImplementedError``) rather
    than compose it without its amplification; a ``ParallelEvent`` of shuffled events works.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(ShuffledEvent(4.0, 100_000), 1e-6)), 3)
      0.17
      >>> round(float(epsilon(ShuffledEvent(4.0, 100_000, "randomized_response"), 1e-6)), 3)
      0.118
    """

    eps0: ArrayLike
    n: ArrayLike
    randomizer: str = dataclasses.field(default="any", metadata=dict(static=True))
    blocks: int = dataclasses.field(default=BLOCKS, metadata=dict(static=True))

    def check(self, where: str) -> None:
        _check_options(self.randomizer, "upper", self.blocks)
        _check_budget(self.eps0, self.n, p.dtype_of(self), where)

    def valid(self) -> Array:
        eps0, n = _float(self.eps0, self.n)
        return _domain(eps0, n)

    def prepared(self) -> ShuffledEvent:
        return ShuffledEvent(p.budget_array(self.eps0), p.array(self.n), self.randomizer,
                             self.blocks)

    def delta_at(self, eps: Array) -> Array:
        args = _arrays(eps.dtype, self.eps0, self.n, eps, RANDOMIZERS.index(self.randomizer), 1)
        return _delta_kernel(*args, self.blocks)

    def epsilon_at(self, log_delta: Array) -> Array:
        args = _arrays(log_delta.dtype, self.eps0, self.n, log_delta,
                       RANDOMIZERS.index(self.randomizer), 1)
        return _epsilon_kernel(*args, self.blocks)


__all__ = [
    "BLOCKS",
    "RANDOMIZERS",
    "ShuffledEvent",
    "shuffle_delta",
    "shuffle_epsilon",
    "shuffle_epsilon_closed_form",
]
