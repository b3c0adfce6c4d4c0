"""Learners for RW-Meta: pure ``(init, step)`` pairs that map past noisy gains to an action.

"Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026), Sec. 5 (RW-Meta) and
its COVID experiment. A learner is a data-*dependent* expert: at round t it outputs an action
x_{t,i} over the n experts (one-hot, or a distribution) computed only from the noisy gains g~_1 ..
g~_{t-1} that RW-Meta shares with every learner. Because a learner only ever sees g~, running it is
post-processing of the mu-GLDP release and costs no privacy.

Interface (a :class:`Learner`):

* ``init(hyper, num_experts, noise_sd) -> (state, action)``: the state before any data and the
  action for round 1 (``num_experts`` is a static Python int);
* ``step(hyper, state, noisy_gain, noise_sd) -> (state, action)``: absorb round t's noisy gain
  vector and return the action for round t + 1.

``noise_sd`` is the public per-coordinate noise scale eta of the release (learners may use it,
e.g. to scale their regularisation); it is not data. ``hyper`` holds the learner's numeric
hyperparameters as array leaves. A *family* of learners of one kind is one ``Learner`` plus a
``hyper`` pytree whose leaves carry a leading axis (one entry per learner):
:func:`family_init` / :func:`family_step` ``vmap`` over it, so e.g. the 12 ridge learners of the
paper's experiment are a single vmapped computation.

Actions: a ridge learner plays "the argmax" as the uniform distribution over the set of
maximisers (:func:`argmax_action`). With continuous noisy inputs ties have probability zero
except before the first observation, where a ridge learner plays uniformly (the RW-FTPL learner
uses RW-FTPL's own decision function, whose ties go to the lowest index).

Learners shipped:

* :func:`ridge_learner` (rolling ridge / Bayesian linear regression, the paper's "Gaussian
  regression"). The paper does not publish features or regularisation, so this is our choice
  (documented in the README's experts section and tested): per expert, fit the last
  ``k = min(t - 1, w)`` noisy gains (lags l = 1..k, l = 1 the most recent) with features
  phi(l) = (1, -l / w) (intercept + linear trend, the trend measured per window length) under
  the Gaussian prior beta ~ N(0, tau^2 I) and Gaussian observation noise of variance
  s^2 = eta^2 + 1/4 (the release's noise variance plus 1/4, the largest variance of a
  [0, 1]-valued gain, as a model-misfit floor). The posterior mean is the ridge solution
  beta = (Phi^T Phi + kappa I)^{-1} Phi^T y with kappa = s^2 / tau^2, so the regularisation
  grows with the privacy noise. The prediction for the next round is phi(0)^T beta = beta_0;
  the learner plays the argmax over experts. Hyperparameters: window w (<= the static buffer
  length) and prior sd tau: weak tau = 1, medium tau = 0.1, strong tau = 0.01 (gain units).
  Every ridge prediction is a fixed linear filter of each expert's recent history (the same
  weights for every expert), see :func:`ridge_weights`.
* :func:`follow_the_noisy_leader` -- RW-FTPL as a learner: the argmax of the cumulative noisy
  gains it has seen, through RW-FTPL's own decision function
  :func:`ldpjax.experts.rw_ftpl.leader` (ties, i.e. round 1, go to the lowest index). Inside
  RW-Meta the random walk is the shared release noise itself, so this is exactly RW-FTPL's
  decision rule applied to the shared g~ (without RW-FTPL's extra initial draw z_0).
* :func:`static_expert` -- always play expert ``hyper.expert`` (one-hot). With these n static
  learners RW-Meta reduces to an RW-FTPL-like algorithm (see :mod:`ldpjax.experts.rw_meta`).

:func:`paper_learners` builds the paper's 13 learners (4 windows x 3 strengths + RW-FTPL);
:func:`evaluate_learners` runs learners on a given gain sequence (e.g. the clean gains, for
"the best learner in hindsight without privacy noise").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.experts.rw_ftpl import leader
from ldpjax.types import Array, ArrayLike, PyTree

#: Model-misfit floor added to the release's noise variance in the ridge likelihood:
#: 1/4 is the largest variance of a random variable with values in [0, 1].
GAIN_VARIANCE_FLOOR = 0.25

#: The paper's windows and our three regularisation strengths (prior sd tau in gain units).
PAPER_WINDOWS = (8, 16, 32, 64)
REGULARISATION_LEVELS = {"weak": 1.0, "medium": 0.1, "strong": 0.01}


class Learner(NamedTuple):
    """A learner: pure ``init`` / ``step`` functions (see the module docstring) and a name.

    ``family_batched = True`` marks a learner whose ``init`` / ``step`` take the hyperparameters
    of a whole family (leading learner axis) and return actions (k, n) themselves, so that the
    family can share state (the ridge learners share one window buffer of the noisy gains they
    all read); otherwise :func:`family_init` / :func:`family_step` ``vmap`` the single-learner
    functions over the family axis.
    """

    init: Callable[..., tuple[PyTree, Array]]
    step: Callable[..., tuple[PyTree, Array]]
    name: str = "learner"
    family_batched: bool = False


class LearnerFamily(NamedTuple):
    """One learner kind plus hyperparameters with a leading axis (one entry per learner)."""

    learner: Learner
    hyper: PyTree
    labels: tuple[str, ...]


# --------------------------------------------------------------------------- helpers
def argmax_action(scores: ArrayLike) -> Array:
    """Uniform distribution over the maximisers of ``scores`` (last axis): the argmax action.

    A one-hot vector whenever the maximum is unique (almost surely for noisy scores).

    Example:
      >>> argmax_action(jnp.array([0.1, 0.7, 0.2])).tolist()
      [0.0, 1.0, 0.0]
    """
    scores = jnp.asarray(scores)
    is_max = scores >= jnp.max(scores, axis=-1, keepdims=True)
    is_max = is_max.astype(scores.dtype if jnp.issubdtype(scores.dtype, jnp.floating) else float)
    return is_max / jnp.sum(is_max, axis=-1, keepdims=True)


def family_size(hyper: PyTree) -> int:
    """Number of learners in a family (the common leading axis of the hyper leaves).

    Example:
      >>> family_size(ridge_family(windows=(4, 8), strengths=('weak',)).hyper)
      2
    """
    leaves = jax.tree_util.tree_leaves(hyper)
    if not leaves:
        raise ValueError("a learner family needs hyperparameters with a leading axis")
    sizes = {int(jnp.shape(x)[0]) if jnp.ndim(x) else -1 for x in leaves}
    if len(sizes) != 1 or -1 in sizes:
        raise ValueError(f"hyper leaves must share one leading (learner) axis; got sizes {sizes}")
    return sizes.pop()


def family_init(learner: Learner, hyper: PyTree, num_experts: int, noise_sd: ArrayLike):
    """``learner.init`` over the family axis (``vmap`` unless family-batched): (states, (k, n)).

    Example:
      >>> fam = static_family(3)
      >>> _, actions = family_init(fam.learner, fam.hyper, 3, 0.0)
      >>> actions.shape
      (3, 3)
    """
    noise_sd = jnp.asarray(noise_sd)
    if learner.family_batched:
        return learner.init(hyper, num_experts, noise_sd)
    return jax.vmap(lambda h: learner.init(h, num_experts, noise_sd))(hyper)


def family_step(
    learner: Learner, hyper: PyTree, states: PyTree, noisy_gain: ArrayLike, noise_sd: ArrayLike
):
    """``learner.step`` over the family axis (``vmap`` unless family-batched); every learner
    reads the same g~.

    Example:
      >>> fam = static_family(2)
      >>> states, _ = family_init(fam.learner, fam.hyper, 2, 0.0)
      >>> _, actions = family_step(fam.learner, fam.hyper, states, jnp.array([0.3, 0.9]), 0.0)
      >>> actions.tolist()  # static experts ignore the data
      [[1.0, 0.0], [0.0, 1.0]]
    """
    noisy_gain = jnp.asarray(noisy_gain)
    noise_sd = jnp.asarray(noise_sd)
    if learner.family_batched:
        return learner.step(hyper, states, noisy_gain, noise_sd)
    return jax.vmap(lambda h, s: learner.step(h, s, noisy_gain, noise_sd))(hyper, states)


def sets_init(learners: Sequence[Learner], hypers: Sequence[PyTree], num_experts, noise_sd):
    """Initialise several families; returns (tuple of states, stacked actions (m, n)).

    Example:
      >>> ls = learner_set(static_family(2), leader_family())
      >>> _, actions = sets_init(ls.learners, ls.hypers, 2, 1.0)
      >>> actions.shape
      (3, 2)
    """
    states, actions = [], []
    for learner, hyper in zip(learners, hypers, strict=True):
        s, a = family_init(learner, hyper, num_experts, noise_sd)
        states.append(s)
        actions.append(a)
    return tuple(states), jnp.concatenate(actions, axis=0)


def sets_step(learners, hypers, states, noisy_gain, noise_sd):
    """Advance several families on the same noisy gain; returns (states, actions (m, n)).

    Example:
      >>> ls = learner_set(leader_family())
      >>> states, _ = sets_init(ls.learners, ls.hypers, 2, 1.0)
      >>> _, actions = sets_step(ls.learners, ls.hypers, states, jnp.array([0.1, 0.8]), 1.0)
      >>> actions.tolist()
      [[0.0, 1.0]]
    """
    new_states, actions = [], []
    for learner, hyper, state in zip(learners, hypers, states, strict=True):
        s, a = family_step(learner, hyper, state, noisy_gain, noise_sd)
        new_states.append(s)
        actions.append(a)
    return tuple(new_states), jnp.concatenate(actions, axis=0)


# --------------------------------------------------------------------------- ridge learner
class RidgeHyper(NamedTuple):
    window: Array  # int, in [1, max_window]: number of most recent noisy gains fitted
    prior_sd: Array  # tau > 0: prior sd of the intercept and the per-window trend (gain units)


class RidgeState(NamedTuple):
    buffer: Array  # (max_window, n) circular buffer of the most recent noisy gains
    count: Array  # int: noisy gains seen so far


def ridge_penalty(prior_sd: ArrayLike, noise_sd: ArrayLike) -> Array:
    """kappa = s^2 / tau^2 with s^2 = eta^2 + 1/4: the ridge penalty of the Bayesian model.

    Args:
      prior_sd: tau > 0 (gain units).
      noise_sd: the release's noise scale eta >= 0.

    Example:
      >>> float(ridge_penalty(1.0, 0.0))  # (0 + 1/4) / 1
      0.25
    """
    v.check_range("prior_sd", prior_sd, 0.0, np.inf, low_open=True, high_open=True)
    v.check_range("noise_sd", noise_sd, 0.0, np.inf, high_open=True)
    prior_sd = jnp.asarray(prior_sd)
    noise_sd = jnp.asarray(noise_sd, jnp.result_type(prior_sd, noise_sd, float))
    return (noise_sd**2 + GAIN_VARIANCE_FLOOR) / prior_sd**2


def ridge_weights(
    window: ArrayLike, count: ArrayLike, penalty: ArrayLike, max_window: int
) -> Array:
    """Weights c_l (l = 1..max_window) with prediction = sum_l c_l y_l (y_1 the most recent).

    The ridge fit on lags l = 1..k, k = min(count, window), features phi(l) = (1, -l/window),
    penalty kappa on both coefficients, evaluated at l = 0: c_l = e_1^T A^{-1} phi(l) for
    l <= k and 0 beyond, with A = sum_{l<=k} phi(l) phi(l)^T + kappa I (a 2x2 matrix).
    With k = 0 every weight is 0; lags beyond ``max_window`` get no weight (callers keep
    ``min(count, window) <= max_window``). ``window`` >= 1, ``count`` >= 0 and ``penalty`` >= 0
    (checked on concrete values).

    Example:
      >>> ridge_weights(3, 2, 0.0, 4).shape
      (4,)
    """
    v.check_integer("max_window", max_window, 1)
    v.check_range("window", window, 1.0, np.inf, high_open=True)
    v.check_range("count", count, 0.0, np.inf, high_open=True)
    v.check_range("penalty", penalty, 0.0, np.inf, high_open=True)
    dtype = jnp.result_type(penalty, float)
    window = jnp.asarray(window).astype(dtype)
    count = jnp.asarray(count).astype(dtype)
    kappa = jnp.asarray(penalty, dtype)
    lags = jnp.arange(1, max_window + 1, dtype=dtype)
    used = lags <= jnp.minimum(count, window)
    trend = jnp.where(used, -lags / window, 0.0)
    ones = used.astype(dtype)
    a = jnp.sum(ones) + kappa
    b = jnp.sum(trend)
    d = jnp.sum(trend * trend) + kappa
    det = a * d - b * b
    return ones * (d * ones - b * trend) / det


@functools.cache
def ridge_learner(max_window: int = 64) -> Learner:
    """Rolling ridge / Bayesian linear regression per expert (see the module docstring).

    Family-batched: ``hyper`` is a :class:`RidgeHyper` with a leading learner axis (k,); the k
    learners share one circular buffer of the last ``max_window`` noisy gains (they all read
    the same g~) and their filter weights are computed by ``vmap`` over (window, prior_sd).

    Args:
      max_window: static buffer length; every ``hyper.window`` must be in [1, max_window].
    """
    v.check_integer("max_window", max_window, 1)
    weights_of = jax.vmap(ridge_weights, in_axes=(0, None, 0, None))

    def init(hyper: RidgeHyper, num_experts: int, noise_sd):
        v.check_integer("window", hyper.window, 1, max_window)  # concrete values only
        v.check_range("prior_sd", hyper.prior_sd, 0.0, np.inf, low_open=True, high_open=True)
        dtype = jnp.result_type(noise_sd, float)
        k = jnp.shape(hyper.window)[0]
        state = RidgeState(jnp.zeros((max_window, num_experts), dtype), jnp.zeros((), jnp.int32))
        return state, jnp.full((k, num_experts), 1.0 / num_experts, dtype)

    def step(hyper: RidgeHyper, state: RidgeState, noisy_gain, noise_sd):
        slot = state.count % max_window
        buffer = state.buffer.at[slot].set(noisy_gain.astype(state.buffer.dtype))
        count = state.count + 1
        # Lag of each slot: the slot just written has lag 1.
        lags = (slot - jnp.arange(max_window)) % max_window + 1
        penalty = ridge_penalty(hyper.prior_sd, noise_sd)
        weights = weights_of(hyper.window, count, penalty, max_window).astype(buffer.dtype)
        predictions = weights[:, lags - 1] @ buffer  # (k, n)
        return RidgeState(buffer, count), argmax_action(predictions)

    return Learner(init, step, f"ridge(max_window={max_window})", family_batched=True)


def ridge_predictions(hyper: RidgeHyper, history: ArrayLike, noise_sd: ArrayLike) -> Array:
    """Predictions for the round after ``history`` (rows = rounds, oldest first) per expert.

    A direct (non-recursive) evaluation of the ridge predictor, for inspection and tests.

    Example:
      >>> import jax
      >>> hyper = ridge_family(windows=(4,), strengths=('weak',), max_window=4).hyper
      >>> one = jax.tree_util.tree_map(lambda x: x[0], hyper)
      >>> ridge_predictions(one, jnp.ones((4, 2)), 0.0).shape
      (2,)
    """
    history = jnp.asarray(history)
    count = history.shape[0]
    max_window = max(int(count), 1)
    weights = ridge_weights(
        hyper.window, count, ridge_penalty(hyper.prior_sd, noise_sd), max_window
    )
    recent_first = history[::-1][:max_window]
    return weights[: recent_first.shape[0]] @ recent_first


def ridge_family(
    windows: Sequence[int] = PAPER_WINDOWS,
    strengths: Sequence[str] = tuple(REGULARISATION_LEVELS),
    max_window: int | None = None,
) -> LearnerFamily:
    """The grid windows x regularisation strengths as one family (windows vary slowest).

    Example:
      >>> learner_set(ridge_family()).size
      12
    """
    windows = tuple(int(w) for w in windows)
    for w in windows:
        v.check_integer("windows", w, 1)
    for s in strengths:
        if s not in REGULARISATION_LEVELS:
            raise ValueError(f"strengths must be among {tuple(REGULARISATION_LEVELS)}; got {s!r}")
    max_window = max(windows) if max_window is None else int(max_window)
    if max(windows) > max_window:
        raise ValueError(f"windows must be <= max_window={max_window}; got {max(windows)}")
    grid = [(w, s) for w in windows for s in strengths]
    hyper = RidgeHyper(
        jnp.asarray([w for w, _ in grid], jnp.int32),
        jnp.asarray([REGULARISATION_LEVELS[s] for _, s in grid], float),
    )
    labels = tuple(f"ridge w={w} {s}" for w, s in grid)
    return LearnerFamily(ridge_learner(max_window), hyper, labels)


# --------------------------------------------------------------------------- RW-FTPL learner
class LeaderHyper(NamedTuple):
    scale: Array  # multiplies the cumulative noisy gains (1 = RW-FTPL); must be > 0


@functools.cache
def follow_the_noisy_leader() -> Learner:
    """RW-FTPL as a learner: argmax of the cumulative noisy gains seen so far."""

    def act(scores):
        return jax.nn.one_hot(leader(scores), scores.shape[-1], dtype=scores.dtype)

    def init(hyper: LeaderHyper, num_experts: int, noise_sd):
        dtype = jnp.result_type(noise_sd, float)
        cumulative = jnp.zeros((num_experts,), dtype)
        return cumulative, act(cumulative)

    def step(hyper: LeaderHyper, cumulative, noisy_gain, noise_sd):
        cumulative = cumulative + noisy_gain.astype(cumulative.dtype)
        return cumulative, act(hyper.scale * cumulative)

    return Learner(init, step, "rw-ftpl")


def leader_family() -> LearnerFamily:
    """RW-FTPL as a one-learner family.

    Example:
      >>> learner_set(leader_family()).size
      1
    """
    return LearnerFamily(follow_the_noisy_leader(), LeaderHyper(jnp.ones((1,))), ("rw-ftpl",))


# --------------------------------------------------------------------------- static experts
class StaticHyper(NamedTuple):
    expert: Array  # int index of the expert always played


@functools.cache
def static_expert() -> Learner:
    """A data-independent learner: always plays expert ``hyper.expert`` (one-hot)."""

    def init(hyper: StaticHyper, num_experts: int, noise_sd):
        dtype = jnp.result_type(noise_sd, float)
        return (), jax.nn.one_hot(hyper.expert, num_experts, dtype=dtype)

    def step(hyper: StaticHyper, state, noisy_gain, noise_sd):
        return (), jax.nn.one_hot(hyper.expert, noisy_gain.shape[-1], dtype=noisy_gain.dtype)

    return Learner(init, step, "static")


def static_family(num_experts: int) -> LearnerFamily:
    """The n static one-hot experts as one family.

    Example:
      >>> learner_set(static_family(3)).size
      3
    """
    v.check_integer("num_experts", num_experts, 2)
    return LearnerFamily(
        static_expert(),
        StaticHyper(jnp.arange(num_experts, dtype=jnp.int32)),
        tuple(f"expert {i}" for i in range(num_experts)),
    )


# --------------------------------------------------------------------------- learner sets
class LearnerSet(NamedTuple):
    """Several families: static ``learners`` (for the algorithm factory), numeric ``hypers``
    (for the params), and one label per learner in the stacked order."""

    learners: tuple[Learner, ...]
    hypers: tuple[PyTree, ...]
    labels: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.labels)


def learner_set(*families: LearnerFamily) -> LearnerSet:
    """Stack families into one set (learner order = family order, then family order).

    Example:
      >>> learner_set(static_family(3), leader_family()).size
      4
    """
    if not families:
        raise ValueError("learner_set needs at least one family")
    for fam in families:
        if family_size(fam.hyper) != len(fam.labels):
            raise ValueError(
                f"family {fam.learner.name!r} has {family_size(fam.hyper)} learners but "
                f"{len(fam.labels)} labels"
            )
    return LearnerSet(
        tuple(f.learner for f in families),
        tuple(f.hyper for f in families),
        tuple(label for f in families for label in f.labels),
    )


def paper_learners(max_window: int = 64) -> LearnerSet:
    """The paper's 13 learners: ridge w in {8, 16, 32, 64} x {weak, medium, strong} + RW-FTPL.

    Example:
      >>> paper_learners().size
      13
    """
    return learner_set(ridge_family(max_window=max_window), leader_family())


# --------------------------------------------------------------------------- evaluation
@functools.partial(jax.jit, static_argnums=(0,))
def _evaluate(learners, hypers, gains, observed, noise_sd):
    num_experts = gains.shape[1]
    states, actions = sets_init(learners, hypers, num_experts, noise_sd)

    def body(carry, rows):
        states, actions = carry
        gain, seen = rows
        earned = actions @ gain
        states, actions = sets_step(learners, hypers, states, seen, noise_sd)
        return (states, actions), earned

    _, earned = jax.lax.scan(body, (states, actions), (gains, observed))
    return earned


def evaluate_learners(
    learner_set_: LearnerSet,
    gains: ArrayLike,
    observed: ArrayLike | None = None,
    noise_sd: ArrayLike = 0.0,
) -> Array:
    """Per-round true gains (T, m) of each learner when it observes ``observed`` (default:
    the clean ``gains``, i.e. no privacy noise) and is told the noise scale ``noise_sd``.

    ``gains`` is validated (T x n in [0, 1]). The learners' inputs after round t are
    ``observed[t]``; the gain learner j earns in round t is <x_{t,j}, gains[t]>.

    Example:
      >>> ls = learner_set(static_family(2))
      >>> evaluate_learners(ls, jnp.array([[1.0, 0.0], [0.5, 0.5]])).tolist()
      [[1.0, 0.0], [0.5, 0.5]]
    """
    from ldpjax.experts.gains import validate_gains

    gains = validate_gains(gains)
    observed = gains if observed is None else jnp.asarray(observed, gains.dtype)
    if observed.shape != gains.shape:
        raise ValueError(
            f"observed must have the shape of gains {gains.shape}; got {observed.shape}"
        )
    v.check_range("noise_sd", noise_sd, 0.0, np.inf, high_open=True)
    return _evaluate(
        learner_set_.learners,
        learner_set_.hypers,
        gains,
        observed,
        jnp.asarray(noise_sd, gains.dtype),
    )


__all__ = [
    "GAIN_VARIANCE_FLOOR",
    "PAPER_WINDOWS",
    "REGULARISATION_LEVELS",
    "Learner",
    "LearnerFamily",
    "LearnerSet",
    "LeaderHyper",
    "RidgeHyper",
    "RidgeState",
    "StaticHyper",
    "argmax_action",
    "evaluate_learners",
    "family_init",
    "family_size",
    "family_step",
    "follow_the_noisy_leader",
    "leader_family",
    "learner_set",
    "paper_learners",
    "ridge_family",
    "ridge_learner",
    "ridge_penalty",
    "ridge_predictions",
    "ridge_weights",
    "sets_init",
    "sets_step",
    "static_expert",
    "static_family",
]
