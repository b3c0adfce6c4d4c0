"""Agarwal & Singh (2017): Hedge on tree-mechanism prefix sums, a *central*-DP baseline.

Paper 000 compares RW-Meta with "The Price of Differential Privacy for Online Learning"
(Agarwal & Singh, ICML 2017) in two settings (spec ``experts.md``, "Baselines"). A trusted
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
from ldpjax.accounting import gaussian_mu, gdp_log_delta
from ldpjax.engine import Algorithm
from ldpjax.types import Array, ArrayLike, PRNGKey


def tree_levels(num_rounds: int) -> int:
    """L = floor(log2 T) + 1: the number of tree nodes each gain enters."""
    v.check_integer("num_rounds", num_rounds, 1)
    return int(num_rounds).bit_length()


def popcount(t: ArrayLike) -> Array:
    """Number of ones in the binary expansion of the (non-negative int) t: nodes of prefix t."""
    v.check_integer("t", t, 0, 2**31 - 1)
    t = jnp.asarray(t, jnp.int32)
    count = jnp.zeros_like(t)
    for bit in range(31):
        count = count + ((t >> bit) & 1)
    return count


@dataclasses.dataclass(frozen=True)
class TreeHedgeConfig:
    """Static configuration: n experts and the horizon T (which fixes the tree depth)."""

    num_experts: int
    num_rounds: int

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        v.check_integer("num_rounds", self.num_rounds, 1)

    @property
    def levels(self) -> int:
        return tree_levels(self.num_rounds)


class TreeHedgeParams(NamedTuple):
    node_sd: Array  # sigma >= 0: noise sd of every tree node (per coordinate)
    learning_rate: Array  # lambda > 0 of Hedge


class TreeHedgeState(NamedTuple):
    t: Array  # rounds completed
    node_sums: Array  # (L, n) exact sum of the latest node at each level (curator side)
    noisy_nodes: Array  # (L, n) released noisy value of the latest node at each level
    cumulative: Array  # (n,) exact G_t (diagnostics only, never used by the player)


class TreeHedgeOutputs(NamedTuple):
    gain: Array  # <x_t, g_t>
    prefix_error: Array  # (n,) G^_t - G_t: the noise of the prefix sum released after round t


def released_prefix(noisy_nodes: Array, t: Array) -> Array:
    """G^_t = sum of the noisy nodes of the binary digits of t (0 for t = 0)."""
    levels = noisy_nodes.shape[0]
    bits = (t >> jnp.arange(levels, dtype=jnp.int32)) & 1
    return bits.astype(noisy_nodes.dtype) @ noisy_nodes


def tree_hedge_params(node_sd: ArrayLike, learning_rate: ArrayLike) -> TreeHedgeParams:
    """Validated params (node_sd in [0, inf), learning_rate in (0, inf))."""
    v.check_range("node_sd", node_sd, 0.0, np.inf, high_open=True)
    v.check_range("learning_rate", learning_rate, 0.0, np.inf, low_open=True, high_open=True)
    return TreeHedgeParams(jnp.asarray(node_sd, float), jnp.asarray(learning_rate, float))


@functools.cache
def tree_hedge(config: TreeHedgeConfig) -> Algorithm:
    """Hedge on binary-tree noisy prefix sums as an engine algorithm (inputs: g_t per round)."""
    n, levels = config.num_experts, config.levels

    def init(params: TreeHedgeParams, key: PRNGKey) -> TreeHedgeState:
        dtype = jnp.result_type(params.node_sd, float)
        zeros = jnp.zeros((levels, n), dtype)
        return TreeHedgeState(jnp.zeros((), jnp.int32), zeros, zeros, jnp.zeros((n,), dtype))

    def step(params: TreeHedgeParams, state: TreeHedgeState, gains: Array, key: PRNGKey):
        dtype = state.noisy_nodes.dtype
        gains = jnp.asarray(gains, dtype)
        t = state.t + 1
        # Player: Hedge on the last released prefix sum G^_{t-1} (post-processing).
        weights = jax.nn.softmax(params.learning_rate * released_prefix(state.noisy_nodes, t - 1))
        gain = weights @ gains
        # Curator: the node of level i = (number of trailing zeros of t) closes at round t; it
        # covers g_t and the latest nodes of levels < i.
        level_ids = jnp.arange(levels, dtype=jnp.int32)
        closing = jnp.argmax(((t >> level_ids) & 1) == 1)
        lower = (level_ids < closing).astype(dtype)
        node = gains + lower @ state.node_sums
        node_sums = state.node_sums.at[closing].set(node)
        noise = params.node_sd.astype(dtype) * jax.random.normal(key, (n,), dtype)
        noisy_nodes = state.noisy_nodes.at[closing].set(node + noise)
        cumulative = state.cumulative + gains
        error = released_prefix(noisy_nodes, t) - cumulative
        new_state = TreeHedgeState(t, node_sums, noisy_nodes, cumulative)
        return new_state, TreeHedgeOutputs(gain, error)

    return Algorithm(init, step)


# --------------------------------------------------------------------------- accounting
def central_mu(node_sd: ArrayLike, num_experts: int, num_rounds: int) -> Array:
    """Central GDP parameter sqrt(n L) / sigma of the whole tree release (inf if sigma = 0)."""
    levels = tree_levels(num_rounds)
    v.check_integer("num_experts", num_experts, 1)
    return gaussian_mu(math.sqrt(num_experts * levels), node_sd)


def min_noise_node_sd(mu: ArrayLike, num_experts: int, num_rounds: int) -> Array:
    """Min Noise: sigma = sqrt(n L) / mu, the smallest node noise that is mu-GDP (0 at inf)."""
    v.check_range("mu", mu, 0.0, np.inf, low_open=True)
    v.check_integer("num_experts", num_experts, 2)
    levels = tree_levels(num_rounds)
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    finite = jnp.isfinite(mu)
    sd = jnp.where(finite, math.sqrt(num_experts * levels) / jnp.where(finite, mu, 1.0), 0.0)
    return v.valid_or_nan(mu > 0, sd)


def standard_learning_rate(num_experts: int, num_rounds: int) -> float:
    """Hedge's worst-case-optimal rate sqrt(8 log n / T) for gains in [0, 1]."""
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    return math.sqrt(8.0 * math.log(num_experts) / num_rounds)


def classical_gaussian_sd(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike) -> Array:
    """sigma = sensitivity sqrt(2 log(1.25 / delta)) / eps (Dwork & Roth Thm A.1; eps < 1)."""
    v.check_range("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    epsilon, delta = jnp.asarray(epsilon, float), jnp.asarray(delta, float)
    return sensitivity * jnp.sqrt(2.0 * (math.log(1.25) - jnp.log(delta))) / epsilon


def _noise_sum(num_rounds: int) -> float:
    return float(np.sum(np.sqrt([bin(t).count("1") for t in range(num_rounds)])))


def hedge_tree_regret_bound(
    learning_rate: ArrayLike, node_sd: ArrayLike, num_experts: int, num_rounds: int
) -> Array:
    """The worst-case bound of the module docstring (differentiable in lambda and sigma)."""
    v.check_range("learning_rate", learning_rate, 0.0, np.inf, low_open=True, high_open=True)
    v.check_range("node_sd", node_sd, 0.0, np.inf, high_open=True)
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    lam = jnp.asarray(learning_rate, jnp.result_type(learning_rate, float))
    sd = jnp.asarray(node_sd, lam.dtype)
    slope = num_rounds / 8.0 + 0.5 * sd * math.sqrt(2.0 * math.log(2.0 * num_experts)) * _noise_sum(
        num_rounds
    )
    return math.log(num_experts) / lam + lam * slope


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
    mu: ArrayLike, num_experts: int, num_rounds: int, num_steps: int = 2000
) -> MinRegretSetting:
    """Min Regret: (eps, delta_mu(eps)), node noise and learning rate minimising the bound.

    Vectorised over an array of ``mu``. mu = inf (no privacy): sigma = 0 and Hedge's standard
    rate (eps = inf, delta = 0). See the module docstring for the exact reading.
    """
    v.check_range("mu", mu, 0.0, np.inf, low_open=True)
    v.check_integer("num_experts", num_experts, 2)
    v.check_integer("num_rounds", num_rounds, 1)
    v.check_integer("num_steps", num_steps, 1)
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    finite = jnp.isfinite(mu)
    safe = jnp.where(finite, mu, 1.0)
    flat = safe.reshape(-1)
    solve = jax.vmap(lambda m: _min_regret_finite(m, num_experts, num_rounds, num_steps))
    eps, delta, sd, lam, bound, delivered = (x.reshape(mu.shape) for x in solve(flat))
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


def min_noise_setting(mu: ArrayLike, num_experts: int, num_rounds: int) -> TreeHedgeParams:
    """Min Noise params: sigma = sqrt(n L) / mu and lambda = sqrt(8 log n / T)."""
    sd = min_noise_node_sd(mu, num_experts, num_rounds)
    lam = jnp.full_like(sd, standard_learning_rate(num_experts, num_rounds))
    return TreeHedgeParams(sd, lam)


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
    "popcount",
    "released_prefix",
    "standard_learning_rate",
    "tree_hedge",
    "tree_hedge_params",
    "tree_levels",
]
