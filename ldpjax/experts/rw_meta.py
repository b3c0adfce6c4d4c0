"""RW-Meta: private choice among learners that share one noisy gain vector per round.

"Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026),
Sec. 5 (Algorithm "RW-Meta", Theorem 3).

Setting: n experts, m learners (:mod:`ldpjax.experts.learners`). Round t = 1..T:

1. every learner has proposed an action x_{t,i} (row i of X_t, m x n) computed from
   g~_1..g~_{t-1} only;
2. the meta step draws fresh y_t ~ N(0, c_t I - Sigma*_{t-1}) with
   Sigma*_{t-1} = Sigma_{t-1} - (1^T Sigma_{t-1} 1 / m^2) 1 1^T and
   c_t = max(2t, lambda_max(Sigma*_{t-1})) (2t in squared-gain units, not scaled by eta^2),
   and plays learner j_t = argmax_j (G~^(m)_{t-1} + y_t)_j, i.e. the action x_{t, j_t};
3. the data holder releases g~_t = g_t + z_t, z_t ~ N(0, eta^2 I_n) -- **the only access to the
   data** (:func:`ldpjax.experts.privacy.privatize_gains`, called once per round);
4. post-processing of g~_t only: G~^(m)_t = G~^(m)_{t-1} + X_t g~_t (an unbiased estimate of
   every learner's cumulative gain, ~ N(G^(m)_t, Sigma_t)),
   Sigma_t = Sigma_{t-1} + eta^2 X_t X_t^T, and every learner steps on the same g~_t to give
   X_{t+1}.

y_t is sampled through the eigendecomposition Sigma* = V diag(lambda) V^T:
y = V (sqrt(max(c - lambda, 0)) * xi), xi ~ N(0, I_m); the clip removes the tiny negative
values rounding can produce (c >= lambda_max makes c - lambda >= 0 exactly). The total
perturbation of the meta scores, Sigma_{t-1} + Cov(y_t) = c_t I + (1^T Sigma 1 / m^2) 1 1^T,
is isotropic up to a multiple of 1 1^T, which does not change the argmax: this is the
decorrelation that reduces the analysis to RW-FTPL's (Theorem 3).

Privacy: mu-GLDP with eta = sensitivity / mu (``params.sensitivity``, default sqrt(n)), at no
extra cost for the m learners: steps 2 and 4 never read g_t. The release is
:func:`ldpjax.experts.privacy.privatize_gains`, i.e. :func:`ldpjax.mechanisms.gaussian_mechanism`
with ``domain=(0, 1)`` (gains outside [0, 1]: ``ValueError`` from ``validate`` when concrete, a
NaN release when traced). Per-record claim (``privacy_event``, a record = one round's gain
vector): ``GaussianEvent(mu)``. Real data: ``MetaConfig(..., granularity=2**-k)`` releases on
the float-safe granular path (claim: the mechanism's ``DiscreteGaussianEvent``; the scores'
covariance then uses the granular noise sd). This is structural here: :func:`meta_decide`
takes no data at all, :func:`meta_observe` takes only the released g~_t, and the engine step is
"decide, release once, observe"; the true gains enter the step only through
:func:`~ldpjax.experts.privacy.privatize_gains` and through the bookkeeping of what the player
and the learners earned (outputs, never fed back).

mu = inf (written explicitly): no privacy requirement. The release is the clean gain vector
(eta = 0, :func:`release_scale`), so the scores G~^(m) and every learner see the clean gains
(Sigma stays 0; the learners get ``noise_sd = 0``), while the meta step **still draws** its
selection perturbation y_t ~ N(0, c_t I), c_t = 2t, and so still randomises among learners.
y_t is the algorithm's own randomness (it reads no data), not privacy noise.

Special case (tested): with the n static one-hot learners (m = n, X_t = I) the score noise is
eta^2 (t - 1) I and c_t = max(2t, eta^2 (t - 1)), so each round's perturbation is isotropic with
variance c_t. At eta^2 = 2 (mu = sqrt(n / 2)) this is 2t = eta^2 t, exactly RW-FTPL's variance
(whose G~_{t-1} holds t noise draws z_0..z_{t-1}), so the per-round action distributions
coincide (the joint law over rounds differs: fresh y_t vs a random walk). For eta^2 > 2 and
t >= eta^2 / (eta^2 - 2) the variance is eta^2 (t - 1): RW-FTPL without its initial draw z_0.

Outputs per round (:class:`MetaOutputs`): the player's gain <x_{t,j_t}, g_t>, every learner's
gain X_t g_t, the chosen learner j_t, c_t, lambda_max(Sigma*_{t-1}) and Sigma_t (record its
last value for Theorem 3's data-dependent term, :func:`lambda_max_ratio`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.engine import Algorithm
from ldpjax.experts import privacy
from ldpjax.experts.learners import Learner, LearnerSet, sets_init, sets_step
from ldpjax.mechanisms import _domain as dom
from ldpjax.types import Array, ArrayLike, PRNGKey


@dataclasses.dataclass(frozen=True)
class MetaConfig:
    """Static configuration of RW-Meta.

    Attributes:
      num_experts: n >= 2 (the length of a gain vector).
      learners: the learner kinds (one :class:`~ldpjax.experts.learners.Learner` per family),
        e.g. ``learner_set.learners``; their hyperparameters go in :class:`MetaParams`.
      granularity: keyword-only; None (float release, simulation) or a power of two
        (float-safe granular release: real data).

    Example:
      >>> from ldpjax.experts.learners import learner_set, static_family
      >>> MetaConfig(3, learner_set(static_family(3)).learners).num_experts
      3
    """

    num_experts: int
    learners: tuple[Learner, ...]
    granularity: float | None = dataclasses.field(default=None, kw_only=True)

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        if not isinstance(self.learners, tuple) or not self.learners or not all(
            isinstance(x, Learner) for x in self.learners
        ):
            raise ValueError("learners must be a non-empty tuple of ldpjax Learner objects")
        dom.check_power_of_two("granularity", self.granularity)


class MetaParams(NamedTuple):
    mu: Array  # GDP parameter of the per-round release, in (0, inf]
    hypers: tuple  # one hyperparameter pytree per learner family (leading learner axis)
    sensitivity: Array | None = None  # l2 sensitivity of a gain vector; None: sqrt(n)


class MetaState(NamedTuple):
    t: Array  # rounds completed
    scores: Array  # G~^(m): (m,) cumulative noisy learner gains
    covariance: Array  # Sigma: (m, m) = eta^2 sum_s X_s X_s^T
    learner_states: tuple  # one state pytree per family
    actions: Array  # X_{t+1}: (m, n) the learners' proposals for the next round


class MetaDecision(NamedTuple):
    chosen: Array  # j_t
    action: Array  # x_{t, j_t} (n,)
    level: Array  # c_t
    lambda_max: Array  # lambda_max(Sigma*_{t-1})


class MetaOutputs(NamedTuple):
    gain: Array  # <x_{t,j_t}, g_t>
    learner_gains: Array  # X_t g_t (m,)
    chosen: Array  # j_t
    level: Array  # c_t
    lambda_max: Array  # lambda_max(Sigma*_{t-1})
    covariance: Array  # Sigma_t after the round (record its last value for Theorem 3's term)


def meta_params(
    mu: ArrayLike, learners: LearnerSet | tuple, sensitivity: ArrayLike | None = None
) -> MetaParams:
    """Validated :class:`MetaParams` from a LearnerSet (or a hypers tuple).

    Args:
      mu: per-round GDP parameter, in (0, inf].
      learners: the :class:`~ldpjax.experts.learners.LearnerSet` (its hyperparameters).
      sensitivity: l2 sensitivity of one gain vector, in (0, inf); None means sqrt(n).

    Example:
      >>> from ldpjax.experts.learners import learner_set, static_family
      >>> float(meta_params(1.0, learner_set(static_family(3))).mu)
      1.0
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    if isinstance(learners, (str, bytes)) or not isinstance(learners, (LearnerSet, tuple, list)):
        raise TypeError(f"learners must be a LearnerSet (or a tuple of hypers), got {learners!r}")
    hypers = learners.hypers if isinstance(learners, LearnerSet) else tuple(learners)
    dtype = jnp.result_type(float)
    mu = jnp.asarray(mu, dtype)
    if sensitivity is None:
        return MetaParams(mu, hypers)
    mu, sens = privacy.broadcast_leaves(dtype, mu=mu, sensitivity=sensitivity)
    return MetaParams(mu, hypers, sens)


def decorrelate(covariance: ArrayLike) -> Array:
    """Sigma* = Sigma - (1^T Sigma 1 / m^2) 1 1^T (so that 1^T Sigma* 1 = 0).

    Example:
      >>> decorrelate(jnp.eye(2))
      Array([[ 0.5, -0.5],
             [-0.5,  0.5]], dtype=float32)
    """
    covariance = jnp.asarray(covariance)
    m = covariance.shape[-1]
    total = jnp.sum(covariance, axis=(-2, -1), keepdims=True)
    return covariance - total / (m * m)


def perturbation_spectrum(covariance: ArrayLike, t: ArrayLike):
    """Eigen-decomposition used to draw y_t: returns (c_t, variances, eigenvectors, lambda_max).

    ``covariance`` is Sigma_{t-1} (m x m, symmetric) and ``t`` the (1-based) round, >= 1.
    y_t = V (sqrt(variances) * xi).

    Example:
      >>> level, variances, _, lam = perturbation_spectrum(jnp.zeros((2, 2)), 3)
      >>> float(level), variances.tolist()
      (6.0, [6.0, 6.0])
    """
    v.check_range("t", t, 1.0, np.inf, high_open=True)
    if jnp.ndim(covariance) < 2 or jnp.shape(covariance)[-1] != jnp.shape(covariance)[-2]:
        raise ValueError(
            f"covariance must be a square (m, m) matrix; got shape {jnp.shape(covariance)}"
        )
    star = decorrelate(covariance)
    star = 0.5 * (star + jnp.swapaxes(star, -1, -2))
    eigenvalues, eigenvectors = jnp.linalg.eigh(star)
    lambda_max = eigenvalues[..., -1]
    level = jnp.maximum(2.0 * jnp.asarray(t, eigenvalues.dtype), lambda_max)
    variances = jnp.clip(level[..., None] - eigenvalues, 0.0, None)
    return level, variances, eigenvectors, lambda_max


def draw_perturbation(key: PRNGKey, covariance: ArrayLike, t: ArrayLike):
    """y_t ~ N(0, c_t I - Sigma*_{t-1}) for round t given Sigma_{t-1}; returns (y, c_t, lambda_max).

    Example:
      >>> import jax
      >>> y, c, _ = draw_perturbation(jax.random.key(0), jnp.zeros((3, 3)), 1)
      >>> y.shape, float(c)
      ((3,), 2.0)
    """
    level, variances, eigenvectors, lambda_max = perturbation_spectrum(covariance, t)
    # The meta step's own selection randomness (reads no data), not privacy noise.
    xi = jax.random.normal(key, variances.shape, variances.dtype)
    return eigenvectors @ (jnp.sqrt(variances) * xi), level, lambda_max


def meta_decide(state: MetaState, key: PRNGKey) -> MetaDecision:
    """Step 2: the meta choice for round t = state.t + 1. Reads no data (noisy or not).

    Example:
      >>> import jax
      >>> from ldpjax.experts.learners import learner_set, static_family
      >>> ls = learner_set(static_family(3))
      >>> state = rw_meta(MetaConfig(3, ls.learners)).init(meta_params(1.0, ls), jax.random.key(0))
      >>> int(meta_decide(state, jax.random.key(1)).chosen) in (0, 1, 2)
      True
    """
    y, level, lambda_max = draw_perturbation(key, state.covariance, state.t + 1)
    chosen = jnp.argmax(state.scores + y).astype(jnp.int32)
    return MetaDecision(chosen, state.actions[chosen], level, lambda_max)


def meta_observe(
    config: MetaConfig, params: MetaParams, state: MetaState, noisy_gain: ArrayLike, eta: ArrayLike
) -> MetaState:
    """Step 4: post-processing of the released g~_t only (scores, Sigma, learners).

    Example:
      >>> import jax
      >>> from ldpjax.experts.learners import learner_set, static_family
      >>> ls = learner_set(static_family(2))
      >>> config, params = MetaConfig(2, ls.learners), meta_params(1.0, ls)
      >>> state = rw_meta(config).init(params, jax.random.key(0))
      >>> meta_observe(config, params, state, jnp.array([0.5, 1.0]), 1.0).scores.tolist()
      [0.5, 1.0]
    """
    noisy_gain = jnp.asarray(noisy_gain, state.scores.dtype)
    eta = jnp.asarray(eta, state.scores.dtype)
    x = state.actions
    scores = state.scores + x @ noisy_gain
    covariance = state.covariance + eta**2 * (x @ x.T)
    learner_states, actions = sets_step(
        config.learners, params.hypers, state.learner_states, noisy_gain, eta
    )
    return MetaState(state.t + 1, scores, covariance, learner_states, actions)


def release_scale(
    config: MetaConfig, mu: ArrayLike, sensitivity: ArrayLike | None = None
) -> Array:
    """eta of the per-round release: sensitivity / mu (0 at an explicit mu = inf: clean gains).

    On the granular path (``config.granularity``) the rounded sensitivity of the mechanism.
    NaN for a traced invalid mu.

    Example:
      >>> from ldpjax.experts.learners import learner_set, static_family
      >>> config = MetaConfig(4, learner_set(static_family(4)).learners)
      >>> float(release_scale(config, 2.0)), float(release_scale(config, jnp.inf))
      (1.0, 0.0)
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    dtype = jnp.result_type(mu, float)
    sens = privacy.resolve_sensitivity(sensitivity, config.num_experts, dtype)
    return privacy.release_sd(mu, sens, config.num_experts, config.granularity).astype(dtype)


def _validate(config: MetaConfig):
    def validate(params: MetaParams, inputs) -> None:
        """mu in (0, inf], sensitivity in (0, inf), inputs a (T, n) gains matrix in [0, 1]."""
        privacy.check_budget_params(params, config.num_experts)
        if not isinstance(params.hypers, tuple) or len(params.hypers) != len(config.learners):
            raise ValueError(
                f"hypers must be a tuple of {len(config.learners)} hyperparameter pytrees (one "
                f"per learner family), got {type(params.hypers).__name__}"
            )
        privacy.check_gain_inputs(inputs, config.num_experts)

    return validate


def _event(config: MetaConfig):
    def privacy_event(params: MetaParams):
        """Per record (one round's gain vector): the one shared release of that round."""
        sens = privacy.resolve_sensitivity(params.sensitivity, config.num_experts)
        return privacy.gain_event(params.mu, sens, config.num_experts, config.granularity)

    return privacy_event


@functools.cache
def rw_meta(config: MetaConfig) -> Algorithm:
    """RW-Meta as an engine algorithm (cached per configuration: one compilation).

    Step inputs: the true gain vector g_t (n,) of round t (pass the T x n gains matrix as
    ``inputs``; ``validate`` checks it). Params: :class:`MetaParams` (``mu`` may carry grid
    axes for a sweep).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.engine import rollout, record
      >>> from ldpjax.experts.learners import learner_set, static_family
      >>> ls = learner_set(static_family(3))
      >>> algo = rw_meta(MetaConfig(3, ls.learners))
      >>> gains = jnp.tile(jnp.array([0.9, 0.1, 0.1]), (20, 1))
      >>> _, total = rollout(algo, meta_params(1.0, ls), jax.random.key(0), inputs=gains,
      ...                    record=record.total(lambda o: o.gain))
      >>> bool(0.0 <= total <= 20.0)
      True
    """
    n, g = config.num_experts, config.granularity

    def init(params: MetaParams, key: PRNGKey) -> MetaState:
        eta = release_scale(config, params.mu, params.sensitivity)
        learner_states, actions = sets_init(config.learners, params.hypers, n, eta)
        m = actions.shape[0]
        dtype = actions.dtype
        return MetaState(
            jnp.zeros((), jnp.int32),
            jnp.zeros((m,), dtype),
            jnp.zeros((m, m), dtype),
            learner_states,
            actions,
        )

    def step(params: MetaParams, state: MetaState, gains: Array, key: PRNGKey):
        release_key, meta_key = jax.random.split(key)  # release key / selection-randomness key
        decision = meta_decide(state, meta_key)  # before g_t exists for the algorithm
        eta = release_scale(config, params.mu, params.sensitivity)
        gains = jnp.asarray(gains, state.scores.dtype)
        sens = privacy.resolve_sensitivity(params.sensitivity, n, gains.dtype)
        noisy_gain = privacy.privatize_gains(  # the one data access
            release_key, gains, params.mu, sens, granularity=g
        )
        new_state = meta_observe(config, params, state, noisy_gain, eta)
        # Bookkeeping only (never fed back into the state): what was earned.
        outputs = MetaOutputs(
            decision.action @ gains,
            state.actions @ gains,
            decision.chosen,
            decision.level,
            decision.lambda_max,
            new_state.covariance,
        )
        return new_state, outputs

    # run it with ldpjax.experts.EXPERTS_HINTS (XLA CPU's elemental emitters)
    return Algorithm(init, step, _validate(config), _event(config))


def rw_meta_algorithm(
    learners: LearnerSet, num_experts: int, *, granularity: float | None = None
) -> Algorithm:
    """Convenience: ``rw_meta(MetaConfig(num_experts, learners.learners, granularity=...))``.

    The sensitivity is a params leaf: ``meta_params(mu, learners, sensitivity=...)``.

    Example:
      >>> from ldpjax.experts.learners import paper_learners
      >>> algo = rw_meta_algorithm(paper_learners(), 5)
      >>> algo.privacy_event(meta_params(1.0, paper_learners()))
      GaussianEvent(mu=Array(1., dtype=float32))
    """
    if not isinstance(learners, LearnerSet):
        raise TypeError(f"learners must be a LearnerSet, got {type(learners).__name__}")
    v.check_integer("num_experts", num_experts, 2)
    return rw_meta(MetaConfig(int(num_experts), learners.learners, granularity=granularity))


def lambda_max_ratio(covariance: ArrayLike, eta: ArrayLike, num_rounds: ArrayLike) -> Array:
    """Theorem 3's data-dependent term lambda_max(Sigma*_T / (eta^2 T)) from a final Sigma_T.

    Args:
      covariance: Sigma_T, shape (..., m, m).
      eta: the release's noise scale, >= 0 (eta = 0, i.e. mu = inf: Sigma = 0 and the term
        is 0).
      num_rounds: T >= 1.

    Example:
      >>> float(lambda_max_ratio(jnp.eye(2), 1.0, 1))
      1.0
    """
    v.check_range("eta", eta, 0.0, np.inf, high_open=True)
    v.check_range("num_rounds", num_rounds, 1.0, np.inf, high_open=True)
    covariance = jnp.asarray(covariance)
    star = decorrelate(covariance)
    star = 0.5 * (star + jnp.swapaxes(star, -1, -2))
    top = jnp.linalg.eigvalsh(star)[..., -1]
    eta = jnp.asarray(eta, top.dtype)
    ratio = top / (jnp.where(eta > 0, eta, 1.0) ** 2 * jnp.asarray(num_rounds, top.dtype))
    return jnp.where(eta > 0, ratio, jnp.where(eta == 0, 0.0, jnp.nan))


__all__ = [
    "MetaConfig",
    "MetaDecision",
    "MetaOutputs",
    "MetaParams",
    "MetaState",
    "decorrelate",
    "draw_perturbation",
    "lambda_max_ratio",
    "meta_decide",
    "meta_observe",
    "meta_params",
    "perturbation_spectrum",
    "release_scale",
    "rw_meta",
    "rw_meta_algorithm",
]
