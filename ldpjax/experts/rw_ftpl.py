"""RW-FTPL (Devroye et al. 2013), which is mu-GLDP as it stands.

"Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026), Sec. 3.

Update. Each round t = 1..T the data holder releases the noisy gain
vector g~_t = g_t + z_t, z_t ~ N(0, eta^2 I_n), and the player plays the leader of the noisy
cumulative gains,

    x_t = argmax_i (G~_{t-1})_i,   G~_t = sum_{s=0}^t g~_s,   g~_0 = z_0 (g_0 = 0),

so G~_{t-1} holds t noise vectors. Regret (the paper's Sec. 3): E[regret] <= (eta + 2/eta)
sqrt(2 T log n) (:func:`ldpjax.experts.regret_bound_ftpl`).

Privacy. Every release goes through :func:`ldpjax.experts.privatize_gains`, i.e.
:func:`ldpjax.mechanisms.gaussian_mechanism` with ``domain=(0, 1)`` and l2 sensitivity
``params.sensitivity`` (a params leaf; ``None`` means sqrt(n), gains in [0, 1]^n), so each
release is mu-GDP with eta = sensitivity / mu. Everything else is post-processing. Per-record
claim (:attr:`Algorithm.privacy_event`): ``GaussianEvent(mu)``, a record being one round's gain
vector of the data holder (the data holder's whole sequence of T rounds is sqrt(T) mu-GDP:
``ComposedEvent`` of T of them). Which release for real data: ``FTPLConfig(n,
granularity=2**-k)`` passes ``granularity`` to the mechanism (float-safe, exact discrete
Gaussian on 2^-k Z; its claim is the mechanism's ``DiscreteGaussianEvent``); the default float
path is for simulation only.

mu = inf (written explicitly) means no privacy requirement: the release is the clean gain
vector, and RW-FTPL adds its own random walk of scale sqrt 2 (the utility-optimal eta of the
bound). That walk is the algorithm's perturbation, not privacy noise, and only an explicit (or
engine-checked) +inf turns it on: a NaN, negative or -inf mu makes the release NaN. It is drawn
from the release key: on the float path the release itself carries it (called at (mu,
sensitivity) = (1, sqrt 2) where mu = inf, :func:`walk_as_release`), so every round draws one
normal vector whatever mu is; on the granular path it is added to the (noise-free) release.

Structure (what makes "reads only noisy gains" checkable):

* the step computes the round's release exactly once;
* the action is :func:`leader` of the state, whose only content is the noisy cumulative
  vector G~_{t-1} (computed before the round's data is touched);
* the state update :func:`accumulate` takes the state and the noisy gains only;
* the true gains are read once more, after the decision, to report the gain the player
  earned (an output for the experimenter, never fed back into the state).

Keys: ``init`` draws z_0 from its key; step t draws z_t from its key (the engine's
``fold_in(run_key, t)``). RW-AdaBatch (:mod:`ldpjax.experts.rw_adabatch`) uses the very same
keys, so with batches of length 1 it reproduces these actions exactly.

Shapes: n is static (``FTPLConfig``); mu and sensitivity are array leaves of
:class:`FTPLParams`, so a sweep over them is a ``vmap`` (``product_grid(ftpl_params(1.0),
mu=[...])``) and compiles once.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.engine import Algorithm
from ldpjax.experts import privacy
from ldpjax.experts.privacy import privatize_gains
from ldpjax.mechanisms import _domain as dom
from ldpjax.types import Array, ArrayLike

#: ``release(key, gains, mu, sensitivity, *, granularity) -> noisy gains`` (default
#: :func:`ldpjax.experts.privatize_gains`).
Release = Callable[..., Array]


@dataclasses.dataclass(frozen=True)
class FTPLConfig:
    """Static configuration of RW-FTPL.

    Attributes:
      num_experts: n >= 2 (the width of a gain vector).
      granularity: keyword-only; None (float release, simulation) or a power of two such as
        2**-10 (float-safe granular release: use it for real data).

    Example:
      >>> FTPLConfig(4, granularity=2**-10).granularity
      0.0009765625
    """

    num_experts: int
    granularity: float | None = dataclasses.field(default=None, kw_only=True)

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        dom.check_power_of_two("granularity", self.granularity)


class FTPLParams(NamedTuple):
    """Numeric parameters (array leaves: vmap/grad reach them)."""

    mu: Array  # per-round GDP parameter, in (0, inf]
    sensitivity: Array | None = None  # l2 sensitivity of a gain vector; None: sqrt(n)


class FTPLState(NamedTuple):
    """Everything the next round needs: only noisy data."""

    noisy_total: Array  # G~_{t-1}, shape (n,)


class FTPLOutputs(NamedTuple):
    """Per-round diagnostics."""

    action: Array  # int32, the expert played this round
    gain: Array  # the true gain earned, g_t[action]


def ftpl_params(mu: ArrayLike, sensitivity: ArrayLike | None = None) -> FTPLParams:
    """Validated parameters: mu in (0, inf]; sensitivity in (0, inf) or None (sqrt(n)).

    Example:
      >>> ftpl_params(1.0).mu, ftpl_params([0.5, 2.0], sensitivity=1.0).sensitivity.shape
      (Array(1., dtype=float32), (2,))
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    dtype = jnp.result_type(float)
    mu = jnp.asarray(mu, dtype)
    if sensitivity is None:
        return FTPLParams(mu)
    mu, sens = privacy.broadcast_leaves(dtype, mu=mu, sensitivity=sensitivity)
    return FTPLParams(mu, sens)


def leader(noisy_total: Array) -> Array:
    """The decision: argmax of the noisy cumulative gains (ties: lowest index), int32.

    Exactly ``jnp.argmax`` (a NaN counts as the maximum: the first NaN's index), computed as
    the lowest index i with x_i = max_j x_j (or x_i NaN): two plain reductions, which XLA
    vectorises, where argmax's (value, index) reduction is not.

    Example:
      >>> int(leader(jnp.array([0.1, 2.0, -1.0])))
      1
      >>> int(leader(jnp.array([0.1, jnp.nan, 2.0, jnp.nan])))  # as jnp.argmax
      1
    """
    noisy_total = jnp.asarray(noisy_total)
    width = noisy_total.shape[-1]
    top = jnp.max(noisy_total, axis=-1, keepdims=True)
    hit = (noisy_total == top) | jnp.isnan(noisy_total)
    index = jnp.arange(width, dtype=jnp.int32)
    return jnp.min(jnp.where(hit, index, jnp.int32(width)), axis=-1)


def accumulate(state: FTPLState, noisy_gains: Array) -> FTPLState:
    """The update: G~_t = G~_{t-1} + g~_t (reads only the noisy release).

    Example:
      >>> accumulate(FTPLState(jnp.zeros(2)), jnp.array([0.5, -1.0])).noisy_total
      Array([ 0.5, -1. ], dtype=float32)
    """
    return FTPLState(state.noisy_total + noisy_gains)


def perturbed_release(
    release: Release, key, gains: Array, params, num_experts: int, granularity: float | None
) -> Array:
    """g~ = release(key, g, mu, sensitivity) + (RW-FTPL's walk of scale sqrt 2 at mu = inf).

    The law is g + N(0, eta^2 I) for every valid mu (eta = sensitivity / mu, or sqrt 2 at
    mu = inf), from one normal draw of the release key. Float path: where mu is an explicit
    (or engine-permitted) +inf the release is called at (mu, sensitivity) = (1, sqrt 2), whose
    noise is exactly the walk sqrt(2) z (the same z, bit for bit, as the mechanism draws at any
    other mu); everywhere else at (mu, sensitivity). The walk is algorithmic randomness, not
    privacy noise: at mu = inf nothing is private. A NaN/invalid mu, an unpermitted traced
    inf or an invalid sensitivity reaches the mechanism unchanged (or as NaN): release NaN.
    Granular path: the release at mu (exact zero noise at inf) plus the float walk
    sqrt(2) z of the same key (z is then drawn twice; that path is for real data, not speed).

    Example:
      >>> import jax
      >>> out = perturbed_release(privatize_gains, jax.random.key(0), jnp.zeros(3),
      ...                         ftpl_params(jnp.inf), 3, None)
      >>> bool(jnp.all(out != 0))  # mu = inf: the sqrt(2) walk, no privacy noise
      True
    """
    gains = jnp.asarray(gains)
    sens = privacy.resolve_sensitivity(params.sensitivity, num_experts, gains.dtype)
    if granularity is None:
        mu, sens = walk_as_release(params.mu, sens)
        return release(key, gains, mu, sens, granularity=None)
    noisy = release(key, gains, params.mu, sens, granularity=granularity)
    # Algorithmic randomness, not privacy noise: RW-FTPL's own perturbation at mu = inf.
    walk = privacy.walk_scale(params.mu, gains.dtype) * jax.random.normal(
        key, gains.shape, gains.dtype
    )
    return noisy + walk


def walk_as_release(mu: ArrayLike, sensitivity: Array) -> tuple[Array, Array]:
    """The (mu, sensitivity) of the float release that carries RW-FTPL's walk.

    (1, sqrt 2) where mu is +inf and inf is honoured here (concrete, or inside
    :func:`ldpjax.mechanisms.no_privacy_permitted`): the release's noise sd is then exactly
    sqrt 2 (a NaN sensitivity instead if the given one is outside (0, inf), so the release
    stays NaN as it would at mu = inf). Elsewhere (mu, sensitivity) unchanged; an
    unpermitted traced inf is passed on, and the mechanism makes that release NaN.

    Example:
      >>> mu, sens = walk_as_release(jnp.array([jnp.inf, 2.0]), jnp.array([3.0, 3.0]))
      >>> mu.tolist(), [round(x, 4) for x in sens.tolist()]
      ([1.0, 2.0], [1.4142, 3.0])
    """
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    if not dom.inf_allowed(mu):
        return mu, sensitivity
    walk = mu == jnp.inf
    ok = dom.sensitivity_ok(sensitivity)
    walk_sens = jnp.where(ok, privacy.NONPRIVATE_ETA, jnp.nan).astype(sensitivity.dtype)
    return jnp.where(walk, 1.0, mu).astype(mu.dtype), jnp.where(walk, walk_sens, sensitivity)


def _validate(config: FTPLConfig):
    def validate(params: FTPLParams, inputs) -> None:
        """mu in (0, inf], sensitivity in (0, inf), inputs a (T, n) matrix in [0, 1]."""
        privacy.check_budget_params(params, config.num_experts)
        privacy.check_gain_inputs(inputs, config.num_experts)

    return validate


def _event(config: FTPLConfig):
    def privacy_event(params: FTPLParams):
        """Per record (one round's gain vector): the one release of that round."""
        sens = privacy.resolve_sensitivity(params.sensitivity, config.num_experts)
        return privacy.gain_event(params.mu, sens, config.num_experts, config.granularity)

    return privacy_event


def rw_ftpl(config: FTPLConfig, release: Release = privatize_gains) -> Algorithm:
    """RW-FTPL as an engine algorithm (cached: the same object, compiled once, per config).

    Args:
      config: static :class:`FTPLConfig`.
      release: the local randomizer ``(key, gains, mu, sensitivity, *, granularity) -> noisy
        gains``. Keep the default (:func:`ldpjax.experts.privatize_gains`): the privacy claim
        is about it. Tests swap it to hold the noisy data fixed while the true gains change.

    Returns:
      ``Algorithm(init, step, validate, privacy_event)`` with ``init(params, key) ->
      FTPLState`` (draws z_0) and ``step(params, state, gains_t, key) -> (FTPLState,
      FTPLOutputs)``, where ``gains_t`` is the round's (n,) gain vector in [0, 1] (the engine's
      ``inputs`` row).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.engine import rollout, record
      >>> algo = rw_ftpl(FTPLConfig(num_experts=3))
      >>> gains = jnp.tile(jnp.array([1.0, 0.0, 0.0]), (50, 1))
      >>> _, total = rollout(algo, ftpl_params(jnp.inf), jax.random.key(0), inputs=gains,
      ...                    record=record.total(lambda out: out.gain))
      >>> bool(total > 30)
      True
    """
    return _build(config, release)


@functools.cache
def _build(config: FTPLConfig, release: Release) -> Algorithm:
    """The cached builder (positional arguments, so every call style hits the same entry)."""
    n, g = config.num_experts, config.granularity

    def init(params: FTPLParams, key) -> FTPLState:
        dtype = jnp.result_type(params.mu, float)
        zero = jnp.zeros((n,), dtype)
        return FTPLState(noisy_total=perturbed_release(release, key, zero, params, n, g))

    def step(params: FTPLParams, state: FTPLState, gains, key):
        action = leader(state.noisy_total)  # decided from G~_{t-1} before the round's data
        gains = jnp.asarray(gains, state.noisy_total.dtype)
        noisy_gains = perturbed_release(release, key, gains, params, n, g)  # the data access
        new_state = accumulate(state, noisy_gains)
        return new_state, FTPLOutputs(action=action, gain=gains[action])

    # run it with ldpjax.experts.EXPERTS_HINTS (XLA CPU's elemental emitters)
    return Algorithm(init, step, _validate(config), _event(config))


__all__ = [
    "FTPLConfig",
    "FTPLOutputs",
    "FTPLParams",
    "FTPLState",
    "accumulate",
    "ftpl_params",
    "leader",
    "perturbed_release",
    "rw_ftpl",
    "walk_as_release",
]
