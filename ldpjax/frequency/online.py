"""Online frequency estimation: users report items through an LDP frequency oracle, round by round.

Each round t a fresh batch of ``users`` users (a static number) each holds an item v in
{0, ..., d-1} and sends one report through one *pure* frequency oracle of
:mod:`ldpjax.mechanisms` at budget eps; the server adds each report's support set to running
counts C(v) and, after round t with N_t reports so far, releases the unbiased frequencies

    f~_t(v) = (C_t(v) / N_t - q*) / (p* - q*)     (E[f~_t(v)] = the users' frequency of v)

(Wang, Blocki, Li & Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017, Sec. 3-4; the estimator of :mod:`ldpjax.frequency.estimators`) and their
projection onto the probability simplex (Norm-Sub: Wang, Lopuhaa-Zwakenberg, Li, Skoric & Li,
"Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020). The oracles
(``OnlineFrequencyConfig.oracle``), with (p*, q*) and the claim of one report:

=======  =====================================================  ===================================
oracle   report (mechanism)                                     per-user event
=======  =====================================================  ===================================
``grr``  K-ary RR over d items (``kary_randomized_response``)    ``KaryRandomizedResponseEvent(eps, d)``
``sue``  symmetric unary encoding (basic RAPPOR)                 ``sue_event(eps)``
``oue``  optimized unary encoding                                ``oue_event(eps)``
``blh``  local hashing, g = 2 buckets (``local_hashing``)        ``LocalHashingEvent(eps, 2)``
``olh``  local hashing, g = round(e^eps + 1) (:func:`olh_buckets_of`)  ``LocalHashingEvent(eps, g)``
``hr``   Hadamard response (Acharya, Sun & Zhang, AISTATS 2019)  ``HadamardResponseEvent(eps)``
``ss``   k-subset selection (Ye & Barg, IEEE Trans. IT 2018)     ``SubsetSelectionEvent(eps, d, k)``
=======  =====================================================  ===================================

The closed-form variance of each estimate is in :mod:`ldpjax.frequency.variance`;
:func:`expected_squared_error` gives E[sum_v (f~(v) - f(v))^2] of one run.

**Privacy.** Each user reports once, in one round, through the oracle: the claim of a user is
the oracle's event (:func:`frequency_event`). Users are fresh every round, so the rounds
compose in parallel (``ParallelEvent`` of identical events: the event itself). The rows of
``inputs`` (or the sampled users) are distinct people; a person who reports in k rounds is
covered by ``SelfComposedEvent(event, k)`` instead. The realised law of every report is never
more distinguishable than the nominal one (the mechanisms decide on integer words).

**Shapes: one compile across d.** The static ``max_items`` D fixes every shape; the domain size
``d`` (2 <= d <= D) is an integer leaf of the params, so ``simulate`` sweeps seeds x eps x d in
one compilation. Items beyond d never occur (sampled items lie in [0, d), given ones are
checked) and their counts and estimates are masked to 0. The oracles are run over D items where
that leaves the law of the released statistic unchanged: unary encoding's bits v < d do not
depend on the others (the bits v >= d are dropped, never released), local hashing's hash family
is pairwise independent on all of {0..D-1} (so on {0..d-1}), Hadamard response with the order
K = 2^ceil(log2(D + 1)) has the same (p*, q*) = (e^eps / (e^eps + 1), 1/2) and the same event
for every d; K-ary RR takes d itself as a traced number of categories. Subset selection needs
its subset size k static: its ``ss`` oracle runs at d = D only (``validate`` says so).

**Two paths** (``OnlineFrequencyConfig.path``):

* ``"reports"`` (default): every user's report is drawn by the oracle's mechanism, as a
  deployment does (unary encoding: D words per user; local hashing: public hash seeds from a
  public key and n D hash evaluations for the support counts). Users are processed in blocks
  of ``block`` users (a ``fori_loop``; memory O(block D) per run);
* ``"counts"``: the round's support counts are drawn from the items' histogram,
  Binomial(h_v, p*) + Binomial(n - h_v, q*) per item
  (:func:`ldpjax.mechanisms.unary_encoding.support_counts`): the exact joint law for unary
  encoding, each item's exact marginal law for the other oracles (a real run's counts are
  correlated across items; every estimate's mean and variance are those of the reports path).
  A *simulation* path (floating-point binomials), O(D) per round whatever the number of users.

**Fail closed.** Concrete params are checked by ``validate`` (``ValueError`` naming the leaf:
eps in (0, inf], and within the 32-bit bound of K-ary RR and local hashing; d an integer in
[2, D]; weights finite and >= 0 with mass on {0..d-1}; items integers in [0, d)). Traced invalid
params (a NaN or negative eps, an eps = inf not checked concretely, d outside [2, D]) mark the
run invalid: every estimate is NaN from then on (and the mechanisms report nothing either).

Example (OUE over 16 items, 2 rounds of 500 users, items uniform):
  >>> from ldpjax.engine import make_key, rollout
  >>> config = OnlineFrequencyConfig(max_items=16, oracle="oue", users=500)
  >>> state, out = rollout(online_frequency(config), frequency_params(config, 2.0), make_key(0), 2)
  >>> int(state.reports), out.estimate.shape, round(float(out.projected.sum()), 4)
  (1000, (16,), 1.0)
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import KaryRandomizedResponseEvent
from ldpjax.accounting.frequency_events import (
    HadamardResponseEvent,
    LocalHashingEvent,
    SubsetSelectionEvent,
    oue_event,
    sue_event,
)
from ldpjax.engine import Algorithm
from ldpjax.frequency.estimators import (
    estimate_frequencies,
    grr_probabilities,
    hadamard_probabilities,
    olh_probabilities,
    subset_probabilities,
)
from ldpjax.frequency.postprocess import norm_sub
from ldpjax.frequency.variance import count_variance
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms.hadamard_response import hadamard_response, hadamard_size, hadamard_support
from ldpjax.mechanisms.kary import kary_randomized_response
from ldpjax.mechanisms.local_hashing import (
    MAX_BUCKETS,
    local_hash_seeds,
    local_hashing,
    local_hashing_support,
)
from ldpjax.mechanisms.subset_selection import subset_selection
from ldpjax.mechanisms.unary_encoding import (
    optimized_unary_encoding,
    oue_probabilities,
    sue_probabilities,
    support_counts,
    symmetric_unary_encoding,
)
from ldpjax.types import Array, ArrayLike, PRNGKey

#: The oracles of the family (module table).
ORACLES = ("grr", "sue", "oue", "blh", "olh", "hr", "ss")
#: How a round's support counts are produced (module docstring).
PATHS = ("reports", "counts")
#: Random words per user and block of the reports path (the default ``block`` is this / D).
BLOCK_WORDS = 2**20
_INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class OnlineFrequencyConfig:
    """Static configuration of the online frequency estimator.

    Attributes:
      max_items: D, the largest domain size (fixes the shapes); ``params.d`` lies in [2, D].
      oracle: one of :data:`ORACLES`.
      users: users per round (each reports once).
      path: ``"reports"`` (every report drawn) or ``"counts"`` (counts drawn from the
        histogram; simulation only), see the module docstring.
      subset_size: k of the ``ss`` oracle (static; required for it, unused otherwise).
      block: users per block of the reports path (default ``max(1, BLOCK_WORDS // D)``, at most
        ``users``).
    """

    max_items: int
    oracle: str = "oue"
    users: int = 1000
    path: str = "reports"
    subset_size: int | None = None
    block: int | None = None

    def __post_init__(self):
        for name in ("max_items", "users"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (
                    2 if name == "max_items" else 1):
                raise ValueError(f"{name} must be a Python integer >= "
                                 f"{2 if name == 'max_items' else 1}; got {value!r}")
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {ORACLES}; got {self.oracle!r}")
        if self.path not in PATHS:
            raise ValueError(f"path must be one of {PATHS}; got {self.path!r}")
        if self.oracle == "hr":
            hadamard_size(self.max_items)  # d <= 2^30
        if self.oracle == "ss":
            k = self.subset_size
            if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.max_items - 1:
                raise ValueError(f"subset_size must be a Python integer in [1, max_items - 1] = "
                                 f"[1, {self.max_items - 1}] for oracle 'ss'; got {k!r}")
        if self.block is not None and (isinstance(self.block, bool)
                                       or not isinstance(self.block, int) or self.block < 1):
            raise ValueError(f"block must be None or a Python integer >= 1; got {self.block!r}")

    @property
    def block_size(self) -> int:
        """Users per block of the reports path."""
        block = self.block if self.block is not None else max(1, BLOCK_WORDS // self.max_items)
        return min(block, self.users)

    @property
    def num_blocks(self) -> int:
        return -(-self.users // self.block_size)


class FrequencyParams(NamedTuple):
    """Numeric parameters (grid them with ``ldpjax.engine.product_grid``).

    Attributes:
      eps: the oracle's budget, float in (0, inf].
      d: the domain size, integer in [2, max_items] (int32).
      weights: shape (max_items,): sampled users hold item v < d with probability
        weights[v] / sum_{u < d} weights[u] (ignored when ``inputs`` gives the items).
    """

    eps: Array
    d: Array
    weights: Array


class FrequencyState(NamedTuple):
    """The server's running aggregate (and the simulation's ground truth).

    Attributes:
      support: C(v), reports so far that support item v, shape (D,) int32 (0 for v >= d).
      reports: N, valid reports so far (int32).
      truth: the histogram of the users' true items so far, shape (D,) int32: the simulation's
        ground truth for the error, never released and never read by the estimator.
      valid: False once a round ran with invalid traced params (estimates NaN from then on) or
        the int32 counters would overflow.
    """

    support: Array
    reports: Array
    truth: Array
    valid: Array


class FrequencyOutputs(NamedTuple):
    """Per-round release and diagnostics.

    Attributes:
      estimate: f~(v), the unbiased frequencies after this round, shape (D,) (0 for v >= d;
        NaN where the run is invalid).
      projected: Norm-Sub of ``estimate`` over {0..d-1}: a distribution (0 for v >= d).
      squared_error: sum_{v < d} (f~(v) - f(v))^2 against the users' true frequencies so far.
    """

    estimate: Array
    projected: Array
    squared_error: Array


# --------------------------------------------------------------------------- oracle numbers
def olh_buckets_of(eps: ArrayLike) -> Array:
    """OLH's buckets g = round(e^eps + 1) in [2, 65535] as a traceable float (the same rule as
    :func:`ldpjax.mechanisms.olh_buckets` for concrete eps).

    Example:
      >>> float(olh_buckets_of(1.0)), float(olh_buckets_of(3.0))  # e + 1, e^3 + 1 = 21.1
      (4.0, 21.0)
    """
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    g = jnp.round(jnp.exp(jnp.minimum(jnp.where(eps >= 0, eps, 0.0), 12.0)) + 1.0)
    return jnp.where(jnp.isnan(eps), jnp.nan, jnp.clip(g, 2.0, float(MAX_BUCKETS)))


def _buckets(config: OnlineFrequencyConfig, eps: Array) -> Array:
    return jnp.full_like(eps, 2.0) if config.oracle == "blh" else olh_buckets_of(eps)


def support_probabilities(config: OnlineFrequencyConfig, eps: ArrayLike, d: ArrayLike
                          ) -> tuple[Array, Array]:
    """(p*, q*) of one report of ``config.oracle`` at (eps, d) (nominal; differentiable in eps).

    Example:
      >>> config = OnlineFrequencyConfig(max_items=8, oracle="grr")
      >>> [round(float(x), 4) for x in support_probabilities(config, 1.0, 4)]  # e/(e+3), 1/(e+3)
      [0.4754, 0.1749]
    """
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    oracle = config.oracle
    if oracle == "grr":
        return grr_probabilities(eps, d)
    if oracle == "sue":
        return sue_probabilities(eps)
    if oracle == "oue":
        return oue_probabilities(eps)
    if oracle in ("blh", "olh"):
        return olh_probabilities(eps, _buckets(config, eps))
    if oracle == "hr":
        return hadamard_probabilities(eps)
    return subset_probabilities(eps, d, config.subset_size)


def frequency_event(config: OnlineFrequencyConfig, eps: ArrayLike, d: ArrayLike) -> Any:
    """The claim of one user's report (module table): the oracle's exact event.

    Example:
      >>> from ldpjax.accounting import epsilon
      >>> config = OnlineFrequencyConfig(max_items=8, oracle="olh")
      >>> round(float(epsilon(frequency_event(config, 1.0, 8), 0.0)), 4)
      1.0
    """
    oracle = config.oracle
    if oracle == "grr":
        return KaryRandomizedResponseEvent(eps, d)
    if oracle == "sue":
        return sue_event(eps)
    if oracle == "oue":
        return oue_event(eps)
    if oracle in ("blh", "olh"):
        return LocalHashingEvent(eps, _buckets(config, jnp.asarray(eps, jnp.result_type(eps,
                                                                                        float))))
    if oracle == "hr":
        return HadamardResponseEvent(eps)
    return SubsetSelectionEvent(eps, d, config.subset_size)


def expected_squared_error(config: OnlineFrequencyConfig, eps: ArrayLike, d: ArrayLike,
                           n: ArrayLike) -> Array:
    """E[sum_{v < d} (f~(v) - f(v))^2] after n reports: the count variances of Wang et al.
    (2017, Thm. 2) summed over the d items, divided by n^2,

        [d q* (1 - q*) / (p* - q*)^2 + (1 - p* - q*) / (p* - q*)] / n

    (the f term sums to 1 over the items, whatever the distribution).

    Example:
      >>> config = OnlineFrequencyConfig(max_items=4, oracle="oue")
      >>> round(float(expected_squared_error(config, 1.0, 4, 1000)), 5)  # 0.01473 + 0.00100
      0.01573
    """
    p_star, q_star = support_probabilities(config, eps, d)
    n = jnp.asarray(n, p_star.dtype)
    zero = count_variance(n, 0.0, p_star, q_star)
    one = count_variance(n, 1.0, p_star, q_star)
    return (jnp.asarray(d, p_star.dtype) * zero + (one - zero)) / (n * n)


# --------------------------------------------------------------------------- params
def zipf_weights(max_items: int, s: float) -> np.ndarray:
    """Weights (v + 1)^-s, v = 0..max_items-1 (s = 0: uniform). Truncated to the first d items
    and normalised they are the Zipf law over d items, for every d.

    Example:
      >>> zipf_weights(3, 1.0).tolist()
      [1.0, 0.5, 0.3333333333333333]
    """
    v.check_range("s", s, 0.0, np.inf, high_open=True)
    return (np.arange(1, max_items + 1, dtype=np.float64)) ** -float(s)


def frequency_params(config: OnlineFrequencyConfig, eps: ArrayLike, d: ArrayLike | None = None,
                     weights: ArrayLike | None = None) -> FrequencyParams:
    """Validated params: eps (float), d (int32; default ``config.max_items``), weights (default
    uniform).

    Example:
      >>> config = OnlineFrequencyConfig(max_items=8, oracle="grr")
      >>> p = frequency_params(config, 1.0, d=4)
      >>> int(p.d), p.weights.shape
      (4, (8,))
    """
    d = config.max_items if d is None else d
    weights = np.ones(config.max_items) if weights is None else weights
    v.check_integer("d", d, 2, config.max_items)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    params = FrequencyParams(eps, jnp.asarray(d, jnp.int32),
                             jnp.asarray(weights, jnp.result_type(eps)))
    validate_params(config, params, None)
    return params


def validate_params(config: OnlineFrequencyConfig, params: FrequencyParams, inputs: Any) -> None:
    """Concrete checks of a params grid and the items (module docstring: fail closed)."""
    big = config.max_items
    v.check_range("params.eps", params.eps, 0.0, np.inf, low_open=True)
    v.check_integer("params.d", params.d, 2, big)
    if config.oracle == "ss" and v.is_concrete(params.d) and np.any(np.asarray(params.d) != big):
        raise ValueError(f"params.d must equal max_items = {big} for the subset-selection "
                         f"oracle (its subset size k = {config.subset_size} is static); got "
                         f"{np.ravel(np.asarray(params.d))[:3].tolist()}")
    if config.oracle in ("grr", "blh", "olh") and v.is_concrete((params.eps, params.d)):
        eps = np.asarray(params.eps, np.float64)
        k = (np.asarray(params.d, np.float64) if config.oracle == "grr"
             else np.asarray(_buckets(config, jnp.asarray(params.eps)), np.float64))
        bound = np.log1p(k * (2.0**32 - 1.0))
        bad = np.isfinite(eps) & (eps > bound)
        if np.any(bad):
            raise ValueError(f"params.eps must be at most log(1 + k (2^32 - 1)) = "
                             f"{float(np.broadcast_to(bound, bad.shape)[bad][0]):.4g} for the "
                             f"{config.oracle} oracle (32-bit exact randomized response) or inf; "
                             f"got {float(np.broadcast_to(eps, bad.shape)[bad][0])!r}")
    weights = params.weights
    if np.shape(weights)[-1:] != (big,):
        raise ValueError(f"params.weights must have last axis max_items = {big}; got shape "
                         f"{np.shape(weights)}")
    v.check_range("params.weights", weights, 0.0, np.inf, high_open=True)
    if v.is_concrete((weights, params.d)):
        w = np.asarray(weights, np.float64)
        d = np.asarray(params.d)[..., None]
        mass = np.sum(np.where(np.arange(big) < d, w, 0.0), axis=-1)
        if np.any(mass <= 0):
            raise ValueError("params.weights must put positive weight on the items 0..d-1")
    if inputs is not None:
        items = np.asarray(inputs) if v.is_concrete(inputs) else inputs
        if np.ndim(items) != 2 or np.shape(items)[1] != config.users:
            raise ValueError(f"inputs must be the users' items, shape (rounds, users = "
                             f"{config.users}); got shape {np.shape(items)}")
        if v.is_concrete((items, params.d)):
            d_min = int(np.min(np.asarray(params.d)))
            v.check("inputs", items, lambda x: (x == np.round(x)) & (x >= 0) & (x < d_min),
                    f"integer items in [0, d) with d = {d_min}")


# --------------------------------------------------------------------------- the step
def _sample_items(key: PRNGKey, weights: Array, d: Array, users: int) -> Array:
    """Data sampling (not privacy noise): i.i.d. items with P[v] proportional to weights[v],
    v < d, by the inverse CDF."""
    big = weights.shape[-1]
    mass = jnp.where(jnp.arange(big) < d, jnp.maximum(weights, 0.0), 0.0)
    cdf = jnp.cumsum(mass)
    u = jax.random.uniform(key, (users,), cdf.dtype) * cdf[-1]
    items = jnp.searchsorted(cdf, u, side="right")
    return jnp.clip(items, 0, jnp.maximum(d - 1, 0)).astype(jnp.int32)


def _histogram(items: Array, size: int) -> Array:
    """Counts of the values in [0, size) (others, e.g. an invalid report -1, are dropped; a
    constant update with ``mode="drop"`` scatters faster on XLA's CPU backend than masked
    updates)."""
    index = jnp.where((items >= 0) & (items < size), items, size)
    return jnp.zeros(size, jnp.int32).at[index].add(1, mode="drop")


def _block_support(config: OnlineFrequencyConfig, params: FrequencyParams, items: Array,
                   active: Array, key: PRNGKey) -> tuple[Array, Array]:
    """Support counts (D,) and valid reports of one block of users (the reports path)."""
    big, oracle, eps = config.max_items, config.oracle, params.eps
    privacy_key, public_key = jax.random.split(key)
    if oracle == "grr":
        reports = kary_randomized_response(privacy_key, items, eps, params.d)
        reports = jnp.where(active, reports, -1)
        return _histogram(reports, big), jnp.sum(reports >= 0, dtype=jnp.int32)
    if oracle in ("sue", "oue", "ss"):
        if oracle == "ss":
            bits = subset_selection(privacy_key, items, eps, big, config.subset_size)
        else:
            release = symmetric_unary_encoding if oracle == "sue" else optimized_unary_encoding
            bits = release(privacy_key, items, eps, big)
        valid = active & jnp.all(bits >= 0, axis=-1)
        support = jnp.sum(jnp.where(valid[:, None], bits, 0), axis=0, dtype=jnp.int32)
        return support, jnp.sum(valid, dtype=jnp.int32)
    if oracle in ("blh", "olh"):
        g = _buckets(config, eps)
        seeds = local_hash_seeds(public_key, items.shape, big)  # public randomness
        reports = jnp.where(active, local_hashing(privacy_key, items, seeds, eps, g, big), -1)
        return (local_hashing_support(reports, seeds, big, g),
                jnp.sum(reports >= 0, dtype=jnp.int32))
    reports = jnp.where(active, hadamard_response(privacy_key, items, eps, big), -1)
    return hadamard_support(reports, big), jnp.sum(reports >= 0, dtype=jnp.int32)


def _round_support(config: OnlineFrequencyConfig, params: FrequencyParams, items: Array,
                   histogram: Array, key: PRNGKey) -> tuple[Array, Array]:
    """(support counts (D,) int32, valid reports) of one round."""
    big = config.max_items
    if config.path == "counts":
        p_star, q_star = support_probabilities(config, params.eps, params.d)
        counts = support_counts(key, histogram.astype(p_star.dtype), p_star, q_star)
        ok = jnp.all(jnp.isfinite(counts))
        return (jnp.where(ok, counts, 0.0).astype(jnp.int32),
                jnp.where(ok, config.users, 0).astype(jnp.int32))
    size, blocks = config.block_size, config.num_blocks
    padded = jnp.zeros(size * blocks, jnp.int32).at[:config.users].set(items)
    users = jnp.arange(size * blocks) < config.users

    def body(b, carry):
        support, count = carry
        start = b * size
        part = jax.lax.dynamic_slice(padded, (start,), (size,))
        active = jax.lax.dynamic_slice(users, (start,), (size,))
        s, c = _block_support(config, params, part, active, jax.random.fold_in(key, b))
        return support + s, count + c

    zero = (jnp.zeros(big, jnp.int32), jnp.zeros((), jnp.int32))
    if blocks == 1:
        return body(0, zero)
    return jax.lax.fori_loop(0, blocks, body, zero)


def _params_ok(config: OnlineFrequencyConfig, params: FrequencyParams) -> Array:
    """Traced domain of the params: eps in (0, inf) (inf where permitted), d in [2, D]."""
    eps = jnp.asarray(params.eps)
    allow_inf = dom.inf_allowed(params.eps)
    ok = (eps > 0) & (allow_inf | (eps < jnp.inf))
    d = jnp.asarray(params.d)
    return ok & (d >= 2) & (d <= config.max_items)


def _masked_projection(estimate: Array, inside: Array) -> Array:
    """Norm-Sub over the items ``inside``: the others are set below min(inside) - 1, which the
    simplex projection always maps to 0 (its shift is at least min(inside) - 1)."""
    low = jnp.min(jnp.where(inside, estimate, jnp.inf)) - 2.0
    projected = norm_sub(jnp.where(inside, estimate, low))
    return jnp.where(inside, projected, 0.0)


@functools.cache
def online_frequency(config: OnlineFrequencyConfig) -> Algorithm:
    """The online frequency estimator for ``config`` (cached: one object, one compilation).

    Inputs: None (each round's users hold i.i.d. items drawn from ``params.weights``: data
    sampling) or the items themselves, an integer array of shape (rounds, users).

    Example:
      >>> import jax.numpy as jnp
      >>> from ldpjax.engine import make_key, product_grid, simulate, record
      >>> config = OnlineFrequencyConfig(max_items=32, oracle="grr", users=200, path="counts")
      >>> params = product_grid(frequency_params(config, 1.0), eps=[1.0, 2.0], d=[2, 32])
      >>> out = simulate(online_frequency(config), params, make_key(0), 3, num_seeds=4,
      ...                grid_ndim=2, record=record.last(lambda o: o.squared_error))
      >>> out.record.shape  # (eps, d, seeds): one compiled sweep over both
      (2, 2, 4)
    """
    if not isinstance(config, OnlineFrequencyConfig):
        raise ValueError(f"config must be an OnlineFrequencyConfig; got {config!r}")
    big = config.max_items

    def init(params: FrequencyParams, key) -> FrequencyState:
        del key
        zeros = jnp.zeros(big, jnp.int32)
        return FrequencyState(zeros, jnp.zeros((), jnp.int32), zeros, jnp.ones((), bool))

    def step(params: FrequencyParams, state: FrequencyState, inputs, key):
        data_key, oracle_key = jax.random.split(key)
        dtype = jnp.result_type(params.eps, float)
        if inputs is None:
            items = _sample_items(data_key, jnp.asarray(params.weights, dtype), params.d,
                                  config.users)
        else:
            items = jnp.asarray(inputs).astype(jnp.int32).reshape(config.users)
        histogram = _histogram(items, big)
        support, count = _round_support(config, params, items, histogram, oracle_key)
        room = (state.reports <= _INT32_MAX - config.users)
        valid = state.valid & _params_ok(config, params) & room
        state = FrequencyState(state.support + support, state.reports + count,
                               state.truth + histogram, valid)
        inside = jnp.arange(big) < params.d
        p_star, q_star = support_probabilities(config, params.eps, params.d)
        estimate = estimate_frequencies(state.support.astype(dtype), state.reports.astype(dtype),
                                        p_star, q_star)
        estimate = jnp.where(inside, estimate, 0.0)
        estimate = jnp.where(valid, estimate, jnp.nan)
        seen = jnp.maximum(jnp.sum(state.truth), 1).astype(dtype)
        truth = state.truth.astype(dtype) / seen
        error = jnp.sum(jnp.where(inside, (estimate - truth) ** 2, 0.0))
        projected = jnp.where(valid, _masked_projection(jnp.where(valid, estimate, 0.0),
                                                        inside), jnp.nan)
        return state, FrequencyOutputs(estimate, projected, error)

    def validate(params: FrequencyParams, inputs) -> None:
        validate_params(config, params, inputs)

    def privacy_event(params: FrequencyParams):
        return frequency_event(config, params.eps, params.d)

    return Algorithm(init, step, validate=validate, privacy_event=privacy_event)


__all__ = [
    "BLOCK_WORDS",
    "FrequencyOutputs",
    "FrequencyParams",
    "FrequencyState",
    "ORACLES",
    "OnlineFrequencyConfig",
    "PATHS",
    "expected_squared_error",
    "frequency_event",
    "frequency_params",
    "olh_buckets_of",
    "online_frequency",
    "support_probabilities",
    "validate_params",
    "zipf_weights",
]
