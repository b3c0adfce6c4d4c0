"""Agarwal & Singh (2017): Hedge on tree-mechanism prefix sums, a *central*-DP baseline.

"Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026)
compares RW-Meta with "The Price of Differential Privacy for Online Learning" (Agarwal &
Singh, ICML 2017) in two settings. A trusted
curator sees the raw gains, keeps the binary-tree ("tree-based aggregation") counter of the
cumulative gain vector, and releases noisy prefix sums G^_t; the player runs Hedge /
entropic FTRL on them: x_t = softmax(lambda G^_{t-1}).

Binary tree (Dwork et al. 2010; Chan et al. 2011). With L = floor(log2 T) + 1 levels, node
(level i, index k) holds the sum of gains over rounds ((k-1) 2^i, k 2^i] plus fresh
N(0, sigma^2 I_n) noise, released when its last round arrives. Round t's prefix sum is the sum
of the nodes of the binary digits of t: G^_t = G_t + N_t with N_t ~ N(0, popcount(t) sigma^2 I_n)
(tested). Each gain enters exactly one node per level, i.e. L nodes; a node has l2
sensitivity sqrt(n), so the whole release is (sqrt(n L) / sigma)-GDP in the central model
(Gaussian mechanism + composition, Dong, Roth & Su 2019).

Privacy layer. Every node is released through :func:`ldpjax.mechanisms.gaussian_mechanism`
(l2 sensitivity ``params.sensitivity`` of one gain vector inside one node, default sqrt(n);
GDP parameter mu_node = sensitivity / sigma, so the noise sd is sigma; ``sigma = 0`` is the
explicit no-noise choice). Gains outside [0, 1] raise in ``validate`` (concrete) and turn the
node, hence every later release that contains it, into NaN (traced). Per-record claim
(``privacy_event``; a record = one round's gain vector, which enters L nodes): ``ComposedEvent``
of L ``GaussianEvent(sensitivity / sigma)``, i.e. central (sqrt(L) sensitivity / sigma)-GDP
(:func:`central_mu`). Real data: ``TreeHedgeConfig(n, T, granularity=2**-k)`` releases every
node on the float-safe granular path (claim: L ``DiscreteGaussianEvent``); the float default is
for simulation.

Our reading of the two settings (the paper gives one line each; see the README section):

* **Min Noise**: the smallest node noise that is mu-GDP centrally, sigma = sqrt(n L) / mu, with
  Hedge's standard worst-case learning rate lambda = sqrt(8 log n / T) (the non-private tuning;
  A&S's "privacy for free" regime). mu = inf: sigma = 0 (plain Hedge).
* **Min Regret**: the (eps, delta) point of the mu-GDP curve, delta = delta_mu(eps)
  (:func:`ldpjax.accounting.gdp_delta`), the noise A&S's Gaussian mechanism uses for it (the
  classical calibration sigma = sqrt(n L) sqrt(2 log(1.25 / delta)) / eps, valid for
  eps in (0, 1) -- Dwork & Roth 2014, Thm A.1), and the learning rate, jointly chosen to
  minimise the worst-case bound below. The minimisation is a differentiable optimisation (optax
  Adam over logit(eps) and log(lambda), gradients through ``gdp_delta``). Since the classical
  calibration is only valid for eps < 1 and is never tighter than the exact one there, the
  released tree is at most mu-GDP (sigma >= sqrt(n L) / mu; tested), i.e. the central
  guarantee still holds. For mu <= 2 the optimum sits at the boundary eps -> 1.

Worst-case bound used by Min Regret (derived for this implementation; A&S's Theorem has the
same structure -- a non-private Hedge term plus a noise term -- with other constants):
with x~_t the noise-free Hedge iterate, Hedge's regret <= log n / lambda + lambda T / 8 for gains
in [0, 1], and softmax(lambda .) is lambda-Lipschitz from l_inf to l_1, so
|<x_t - x~_t, g_t>| <= (lambda / 2) ||N_{t-1}||_inf; with E||N_t||_inf <=
sigma sqrt(popcount(t)) sqrt(2 log(2n)):

    E[regret] <= log n / lambda
                 + lambda [T / 8 + (sigma / 2) sqrt(2 log(2n)) sum_{t=0}^{T-1} sqrt(popcount(t))].

The optimal lambda shrinks like sigma^{-1/2}: with the noise needed for mu <= 1 and hundreds of
experts, Min Regret's learning rate is so small that it plays close to uniformly (the paper's
sanity check: "Min Regret's gain barely moves with mu").
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ldpjax import _validation as v
from ldpjax.accounting import ComposedEvent, GaussianEvent, gaussian_mu, gdp_log_delta
from ldpjax.engine import Algorithm
from ldpjax.experts import privacy
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import gaussian_mechanism, gaussian_noise_scale, granular_claim
from ldpjax.types import Array, ArrayLike, PRNGKey


def tree_levels(num_rounds: int) -> int:
    """L = floor(log2 T) + 1: the number of tree nodes each gain enters.

    Example:
      >>> tree_levels(148)
      8
    """
    v.check_integer("num_rounds", num_rounds, 1)
    return int(num_rounds).bit_length()


def popcount(t: ArrayLike) -> Array:
    """Number of ones in the binary expansion of the (non-negative int) t: nodes of prefix t.

    Example:
      >>> popcount(jnp.array([0, 7, 8])).tolist()
      [0, 3, 1]
    """
    v.check_integer("t", t, 0, 2**31 - 1)
    t = jnp.asarray(t, jnp.int32)
    count = jnp.zeros_like(t)
    for bit in range(31):
        count = count + ((t >> bit) & 1)
    return count


@dataclasses.dataclass(frozen=True)
class TreeHedgeConfig:
    """Static configuration: n experts and the horizon T (which fixes the tree depth).

    ``granularity`` (keyword-only): None (float node releases, simulation) or a power of two
    (float-safe granular node releases: real data).

    Example:
      >>> TreeHedgeConfig(4, 100).levels
      7
    """

    num_experts: int
    num_rounds: int
    granularity: float | None = dataclasses.field(default=None, kw_only=True)

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        v.check_integer("num_rounds", self.num_rounds, 1)
        dom.check_power_of_two("granularity", self.granularity)

    @property
    def levels(self) -> int:
        return tree_levels(self.num_rounds)


class TreeHedgeParams(NamedTuple):
    node_sd: Array  # sigma >= 0: noise sd of every tree node (per coordinate)
    learning_rate: Array  # lambda > 0 of Hedge
    sensitivity: Array | None = None  # l2 sensitivity of one gain vector in a node; None: sqrt(n)


class TreeHedgeState(NamedTuple):
    t: Array  # rounds completed
    node_sums: Array  # (L, n) exact sum of the latest node at each level (curator side)
    noisy_nodes: Array  # (L, n) released noisy value of the latest node at each level


class TreeHedgeOutputs(NamedTuple):
    gain: Array  # <x_t, g_t>
    prefix_error: Array  # (n,) G^_t - G_t: the noise of the prefix sum released after round t


def released_prefix(noisy_nodes: Array, t: Array) -> Array:
    """G^_t = sum of the noisy nodes of the binary digits of t (0 for t = 0).

    Example:
      >>> nodes = jnp.array([[1.0, 0.0], [2.0, 2.0]])
      >>> released_prefix(nodes, jnp.asarray(3)).tolist()
      [3.0, 2.0]
    """
    levels = noisy_nodes.shape[0]
    bits = (t >> jnp.arange(levels, dtype=jnp.int32)) & 1
    return bits.astype(noisy_nodes.dtype) @ noisy_nodes


def tree_hedge_params(
    node_sd: ArrayLike, learning_rate: ArrayLike, sensitivity: ArrayLike | None = None
) -> TreeHedgeParams:
    """Validated params (node_sd in [0, inf), learning_rate in (0, inf), sensitivity in (0, inf)
    or None for sqrt(n)).

    Example:
      >>> tree_hedge_params(1.0, 0.1).node_sd
      Array(1., dtype=float32)
    """
    v.check_range("node_sd", node_sd, 0.0, np.inf, high_open=True)
    v.check_range("learning_rate", learning_rate, 0.0, np.inf, low_open=True, high_open=True)
    v.check_range("sensitivity", sensitivity, 0.0, np.inf, low_open=True, high_open=True)
    if sensitivity is None:
        return TreeHedgeParams(*privacy.broadcast_leaves(node_sd=node_sd, learning_rate=learning_rate))
    return TreeHedgeParams(
        *privacy.broadcast_leaves(
            node_sd=node_sd, learning_rate=learning_rate, sensitivity=sensitivity
        )
    )


def node_mu(params: TreeHedgeParams, num_experts: int) -> Array:
    """GDP parameter of one node release: sensitivity / sigma (inf at sigma = 0; NaN for a
    traced negative, -0.0 or NaN sigma).

    Example:
      >>> float(node_mu(tree_hedge_params(2.0, 0.1), 4))
      1.0
    """
    sd = jnp.asarray(params.node_sd, jnp.result_type(params.node_sd, float))
    sens = _sensitivity(params, num_experts, sd.dtype)
    mu = sens / sd  # sd = 0 -> inf (no noise); sd = -0.0 -> -inf (rejected by the mechanism)
    return v.valid_or_nan((sd >= 0) & ~jnp.signbit(sd), mu)


def _sensitivity(params, num_experts, dtype):
    if params.sensitivity is None:
        return jnp.asarray(math.sqrt(num_experts), dtype)
    return jnp.asarray(params.sensitivity, dtype)


def _validate(config: TreeHedgeConfig):
    def validate(params: TreeHedgeParams, inputs) -> None:
        """node_sd in [0, inf) (not -0.0), learning_rate and sensitivity in (0, inf), gains
        a (T, n) matrix in [0, 1] with T >= num_rounds."""
        v.check("node_sd", params.node_sd, lambda x: (x >= 0) & (x < np.inf) & ~np.signbit(x),
                "in [0, inf)")
        v.check_range("learning_rate", params.learning_rate, 0.0, np.inf, low_open=True,
                      high_open=True)
        v.check_range("sensitivity", params.sensitivity, 0.0, np.inf, low_open=True,
                      high_open=True)
        privacy.check_gain_inputs(inputs, config.num_experts)

    return validate


def _event(config: TreeHedgeConfig):
    def privacy_event(params: TreeHedgeParams):
        """Per record (one round's gain vector): L node releases, composed (central DP)."""
        n = config.num_experts
        mu = node_mu(params, n)
        if config.granularity is None:
            part = GaussianEvent(mu)
        else:
            sens = _sensitivity(params, n, mu.dtype)
            part = granular_claim(sens, mu, config.granularity, n)
        return ComposedEvent((part,) * config.levels)

    return privacy_event


@functools.cache
def tree_hedge(config: TreeHedgeConfig) -> Algorithm:
    """Hedge on binary-tree noisy prefix sums as an engine algorithm (inputs: g_t per round).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.engine import rollout, record
      >>> algo = tree_hedge(TreeHedgeConfig(3, 16))
      >>> gains = jnp.tile(jnp.array([0.9, 0.1, 0.1]), (16, 1))
      >>> params = min_noise_setting(1.0, 3, 16)
      >>> _, total = rollout(algo, params, jax.random.key(0), inputs=gains,
      ...                    record=record.total(lambda o: o.gain))
      >>> bool(0.0 <= total <= 16.0)
      True
    """
    n, levels, g = config.num_experts, config.levels, config.granularity

    def init(params: TreeHedgeParams, key: PRNGKey) -> TreeHedgeState:
        dtype = jnp.result_type(params.node_sd, float)
        zeros = jnp.zeros((levels, n), dtype)
        return TreeHedgeState(jnp.zeros((), jnp.int32), zeros, zeros)

    def step(params: TreeHedgeParams, state: TreeHedgeState, gains: Array, key: PRNGKey):
        dtype = state.noisy_nodes.dtype
        gains = jnp.asarray(gains, dtype)
        t = state.t + 1
        # Player: Hedge on the last released prefix sum G^_{t-1} (post-processing).
        weights = jax.nn.softmax(params.learning_rate * released_prefix(state.noisy_nodes, t - 1))
        gain = weights @ gains
        # Curator: the node of level i = (number of trailing zeros of t) closes at round t; it
        # covers g_t and the latest nodes of levels < i. A gain outside [0, 1] (traced) poisons
        # the node with NaN, so every release that contains it is NaN (fail closed).
        in_domain = dom.in_box(gains, *privacy.GAIN_DOMAIN)
        level_ids = jnp.arange(levels, dtype=jnp.int32)
        closing = jnp.argmax(((t >> level_ids) & 1) == 1)
        lower = (level_ids < closing).astype(dtype)
        node = jnp.where(in_domain, gains, jnp.nan) + lower @ state.node_sums
        node_sums = state.node_sums.at[closing].set(node)
        sens = _sensitivity(params, n, dtype)
        noisy = gaussian_mechanism(key, node, sens, node_mu(params, n), granularity=g)
        noisy_nodes = state.noisy_nodes.at[closing].set(noisy)
        bits = ((t >> level_ids) & 1).astype(dtype)
        error = bits @ (noisy_nodes - node_sums)  # G^_t - G_t (diagnostic output)
        new_state = TreeHedgeState(t, node_sums, noisy_nodes)
        return new_state, TreeHedgeOutputs(gain, error)

    # run it with ldpjax.experts.EXPERTS_HINTS (XLA CPU's elemental emitters)
    return Algorithm(init, step, _validate(config), _event(config))


# --------------------------------------------------------------------------- accounting
def _check_sensitivity(sensitivity, num_experts: int) -> float:
    if sensitivity is None:
        return math.sqrt(num_experts)
    if not isinstance(sensitivity, (int, float, np.floating, np.integer)) or isinstance(
        sensitivity, bool
    ):
        raise TypeError(f"sensitivity must be a positive float (or None: sqrt(n)), got {sensitivity!r}")
    v.check_range("sensitivity", sensitivity, 0.0, np.inf, low_open=True, high_open=True)
    return float(sensitivity)


def central_mu(
    node_sd: ArrayLike, num_experts: int, num_rounds: int, sensitivity: float | None = None
) -> Array:
    """Central GDP parameter sqrt(L) Delta / sigma of the whole tree release (inf if sigma = 0).

    ``sensitivity`` Delta: l2 sensitivity of one gain vector inside one node (default sqrt(n),
    the whole round; e.g. 1 for one hospital's weekly report).

    Example:
      >>> round(float(central_mu(4.0, 4, 8)), 4)   # sqrt(4 * 4) / 4
      1.0
    """
    levels = tree_levels(num_rounds)
    v.check_integer("num_experts", num_experts, 1)
    sens = _check_sensitivity(sensitivity, num_experts)
    return gaussian_mu(math.sqrt(levels) * sens, node_sd)


def min_noise_node_sd(
    mu: ArrayLike, num_experts: int, num_rounds: int, sensitivity: float | None = None
) -> Array:
    """Min Noise: sigma = sqrt(L) Delta / mu (Delta default sqrt(n)), the smallest node noise
    that is mu-GDP centrally (0 at an explicit mu = inf).

    Example:
      >>> float(min_noise_node_sd(2.0, 4, 8))   # sqrt(4) * sqrt(4) / 2
      2.0
    """
    v.check_range("mu", mu, 0.0, np.inf, low_open=True)
    v.check_integer("num_experts", num_experts, 2)
    levels = tree_levels(num_rounds)
    sens = _check_sensitivity(sensitivity, num_experts)
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    # The one noise scale of the mechanisms layer (0 only at an explicit inf, NaN if invalid).
    return gaussian_noise_scale(math.sqrt(levels) * sens, mu)


def standard_learning_rate(num_experts: int, num_rounds: int) -> float:
    """Hedge's worst-case-optimal rate sqrt(8 log n / T) for gains in [0, 1].

    Example:
      >>> round(standard_learning_rate(4, 100), 4)   # sqrt(8 log 4 / 100)
      0.333
    """
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    return math.sqrt(8.0 * math.log(num_experts) / num_rounds)


def classical_gaussian_sd(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike) -> Array:
    """sigma = sensitivity sqrt(2 log(1.25 / delta)) / eps (Dwork & Roth Thm A.1; eps < 1).

    Example:
      >>> round(float(classical_gaussian_sd(0.5, 1e-5, 1.0)), 2)   # sqrt(2 log 125000) / 0.5
      9.69
    """
    v.check_range("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    epsilon, delta = jnp.asarray(epsilon, float), jnp.asarray(delta, float)
    return sensitivity * jnp.sqrt(2.0 * (math.log(1.25) - jnp.log(delta))) / epsilon


def _noise_sum(num_rounds: int) -> float:
    return float(np.sum(np.sqrt([bin(t).count("1") for t in range(num_rounds)])))


def _slope(node_sd, num_experts: int, num_rounds: int):
    return num_rounds / 8.0 + 0.5 * node_sd * math.sqrt(
        2.0 * math.log(2.0 * num_experts)
    ) * _noise_sum(num_rounds)


def optimal_learning_rate(node_sd: ArrayLike, num_experts: int, num_rounds: int) -> Array:
    """The lambda minimising :func:`hedge_tree_regret_bound` for node noise sd sigma:
    sqrt(log n / (T / 8 + (sigma / 2) sqrt(2 log 2n) sum_{t<T} sqrt(popcount t))).

    Example:
      >>> round(float(optimal_learning_rate(0.0, 4, 8)), 4)   # sqrt(log 4 / (8 / 8))
      1.1774
    """
    v.check_range("node_sd", node_sd, 0.0, np.inf, high_open=True)
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    sd = jnp.asarray(node_sd, jnp.result_type(node_sd, float))
    out = jnp.sqrt(math.log(num_experts) / _slope(sd, num_experts, num_rounds))
    return v.valid_or_nan((sd >= 0) & (sd < jnp.inf), out)


def hedge_tree_regret_bound(
    learning_rate: ArrayLike, node_sd: ArrayLike, num_experts: int, num_rounds: int
) -> Array:
    """The worst-case bound of the module docstring (differentiable in lambda and sigma).

    Example:
      >>> bool(hedge_tree_regret_bound(0.5, 1.0, 4, 16) > hedge_tree_regret_bound(0.5, 0.0, 4, 16))
      True
    """
    v.check_range("learning_rate", learning_rate, 0.0, np.inf, low_open=True, high_open=True)
    v.check_range("node_sd", node_sd, 0.0, np.inf, high_open=True)
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    lam = jnp.asarray(learning_rate, jnp.result_type(learning_rate, float))
    sd = jnp.asarray(node_sd, lam.dtype)
    return math.log(num_experts) / lam + lam * _slope(sd, num_experts, num_rounds)


class MinRegretSetting(NamedTuple):
    epsilon: Array
    delta: Array
    node_sd: Array
    learning_rate: Array
    bound: Array
    central_mu: Array  # sqrt(nL) / sigma: the GDP level actually delivered (<= mu)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _min_regret_finite(mu, num_experts, num_rounds, num_steps):
    sens = math.sqrt(num_experts * tree_levels(num_rounds))
    lam0 = standard_learning_rate(num_experts, num_rounds)

    def unpack(z):
        eps = jax.nn.sigmoid(z[0])  # eps in (0, 1): the classical calibration's range
        lam = jnp.exp(z[1])
        log_delta = gdp_log_delta(mu, eps)
        sd = sens * jnp.sqrt(2.0 * (math.log(1.25) - log_delta)) / eps
        return eps, jnp.exp(log_delta), sd, lam

    def objective(z):
        _, _, sd, lam = unpack(z)
        return jnp.log(hedge_tree_regret_bound(lam, sd, num_experts, num_rounds))

    optimizer = optax.adam(0.05)
    z0 = jnp.asarray([0.0, math.log(lam0)], mu.dtype)

    def body(_, carry):
        z, opt_state = carry
        grad = jax.grad(objective)(z)
        updates, opt_state = optimizer.update(grad, opt_state, z)
        return optax.apply_updates(z, updates), opt_state

    z, _ = jax.lax.fori_loop(0, num_steps, body, (z0, optimizer.init(z0)))
    eps, delta, sd, lam = unpack(z)
    return eps, delta, sd, lam, jnp.exp(objective(z)), sens / sd


def min_regret_setting(
    mu: ArrayLike,
    num_experts: int,
    num_rounds: int,
    num_steps: int = 2000,
    sensitivity: float | None = None,
) -> MinRegretSetting:
    """Min Regret: (eps, delta_mu(eps)), node noise and learning rate minimising the bound.

    Vectorised over an array of ``mu``. mu = inf (no privacy): sigma = 0 and Hedge's standard
    rate (eps = inf, delta = 0). See the module docstring for the exact reading.
    ``sensitivity`` Delta (default sqrt(n)): the optimal eps does not depend on it (the
    calibrated sd is Delta sqrt(L) times a function of eps, and the bound is increasing in sd),
    so sigma scales by Delta / sqrt(n) and lambda = :func:`optimal_learning_rate` (sigma).

    Example:
      >>> s = min_regret_setting(1.0, 4, 16, num_steps=200)
      >>> bool(s.central_mu <= 1.0 + 1e-4)
      True
    """
    v.check_range("mu", mu, 0.0, np.inf, low_open=True)
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    v.check_integer("num_steps", num_steps, 1)
    sens = _check_sensitivity(sensitivity, num_experts)
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    finite = jnp.isfinite(mu)
    safe = jnp.where(finite, mu, 1.0)
    flat = safe.reshape(-1)
    solve = jax.vmap(lambda m: _min_regret_finite(m, num_experts, num_rounds, num_steps))
    eps, delta, sd, lam, bound, delivered = (x.reshape(mu.shape) for x in solve(flat))
    if sensitivity is not None:
        sd = sd * (sens / math.sqrt(num_experts))
        lam = optimal_learning_rate(sd, num_experts, num_rounds)
        bound = hedge_tree_regret_bound(lam, sd, num_experts, num_rounds)
        delivered = math.sqrt(tree_levels(num_rounds)) * sens / sd
    lam0 = standard_learning_rate(num_experts, num_rounds)
    nonprivate_bound = hedge_tree_regret_bound(lam0, 0.0, num_experts, num_rounds)
    return MinRegretSetting(
        jnp.where(finite, eps, jnp.inf),
        jnp.where(finite, delta, 0.0),
        jnp.where(finite, sd, 0.0),
        jnp.where(finite, lam, lam0),
        jnp.where(finite, bound, nonprivate_bound),
        jnp.where(finite, delivered, jnp.inf),
    )


def min_noise_setting(
    mu: ArrayLike, num_experts: int, num_rounds: int, sensitivity: float | None = None
) -> TreeHedgeParams:
    """Min Noise params: sigma = sqrt(L) Delta / mu and lambda = sqrt(8 log n / T).

    ``sensitivity`` Delta (default sqrt(n)) is also stored in the params (a leaf), so the
    algorithm's ``privacy_event`` states the same central claim.

    Example:
      >>> p = min_noise_setting(2.0, 4, 8)
      >>> float(p.node_sd), p.sensitivity is None
      (2.0, True)
    """
    sd = min_noise_node_sd(mu, num_experts, num_rounds, sensitivity)
    lam = jnp.full_like(sd, standard_learning_rate(num_experts, num_rounds))
    if sensitivity is None:
        return TreeHedgeParams(sd, lam)
    return TreeHedgeParams(sd, lam, jnp.full_like(sd, float(sensitivity)))


__all__ = [
    "MinRegretSetting",
    "TreeHedgeConfig",
    "TreeHedgeOutputs",
    "TreeHedgeParams",
    "TreeHedgeState",
    "central_mu",
    "classical_gaussian_sd",
    "hedge_tree_regret_bound",
    "min_noise_node_sd",
    "min_noise_setting",
    "min_regret_setting",
    "node_mu",
    "optimal_learning_rate",
    "popcount",
    "released_prefix",
    "standard_learning_rate",
    "tree_hedge",
    "tree_hedge_params",
    "tree_levels",
]
