"""The algorithm contract shared by every ldpjax algorithm.

An algorithm is a pair of pure functions (optax's ``GradientTransformation``, blackjax's
``SamplingAlgorithm``):

* ``init(params, key) -> state``
* ``step(params, state, inputs, key) -> (state, outputs)``

``params`` is a pytree of *numeric* parameters (budgets, learning rates, CTRs) whose leaves are
arrays, so a sweep over them is a ``vmap`` and ``jax.grad`` reaches them. Settings that change
shapes (number of experts, horizon, window lengths) are static: they are fixed when the
algorithm is built, typically from a frozen dataclass passed to a cached factory. ``state`` is
an immutable pytree (``NamedTuple``) holding what the next step needs; ``outputs`` holds the
per-step diagnostics (action, gain, batch size, ...) that a recorder reduces. ``inputs`` is the
slice at time t of an optional time-indexed pytree (e.g. a row of a gains matrix), or ``None``.

Keys: the engine gives ``init`` its own key and step t the key ``fold_in(run_key, t)``, so a
run's randomness does not depend on how time or seeds are chunked. Algorithms keep their own
clock in ``state`` when they need t.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from ldpjax.types import PRNGKey, PyTree


class InitFn(Protocol):
    def __call__(self, params: PyTree, key: PRNGKey) -> PyTree: ...


class StepFn(Protocol):
    def __call__(
        self, params: PyTree, state: PyTree, inputs: Any, key: PRNGKey
    ) -> tuple[PyTree, PyTree]: ...


class ValidateFn(Protocol):
    def __call__(self, params: PyTree, inputs: Any) -> None: ...


class PrivacyEventFn(Protocol):
    def __call__(self, params: PyTree) -> Any: ...


class Algorithm(NamedTuple):
    """The contract of an algorithm: four fields, a pure ``(init, step)`` pair, its check and
    its claim. Build it once (e.g. in a cached factory) and reuse it.

    How a run is executed (batch layout, scan unroll, XLA options) is not part of the contract:
    it is an :class:`~ldpjax.engine.ExecutionHints` record given to
    :func:`~ldpjax.engine.simulate` / :func:`~ldpjax.engine.rollout` (``hints=``).

    Attributes:
      init: ``init(params, key) -> state``.
      step: ``step(params, state, inputs, key) -> (state, outputs)``.
      validate: optional ``validate(params, inputs) -> None``; raises ``ValueError`` naming the
        offending leaf when a *concrete* params pytree (one grid point or a whole stacked grid)
        or the time-indexed inputs are outside the domain the privacy claim assumes.
        :func:`ldpjax.engine.simulate` calls it before compiling. Traced values are not
        checked here; the mechanisms then fail closed (NaN release).
      privacy_event: optional ``privacy_event(params) -> event``: the per-record privacy claim
        of one run at ``params`` as a :mod:`ldpjax.accounting` event, which the
        accountants (``epsilon``, ``delta``, ``tradeoff``) take. ``None`` for algorithms that
        release nothing private (non-private baselines, the demo's data generator).
        The engine asks the event of a concrete grid whether it grants no privacy
        (:func:`ldpjax.accounting.protocol.grants_no_privacy`) to honour a no-noise budget.

    Example:
      >>> import jax.numpy as jnp
      >>> from ldpjax.engine import Algorithm, make_key, simulate
      >>> walk = Algorithm(lambda p, k: jnp.zeros(()),
      ...                  lambda p, s, x, k: (s + p, s + p))
      >>> Algorithm._fields
      ('init', 'step', 'validate', 'privacy_event')
      >>> simulate(walk, jnp.float32(0.5), make_key(0), 4, num_seeds=2).record.tolist()
      [2.0, 2.0]
    """

    init: InitFn
    step: StepFn
    validate: ValidateFn | None = None
    privacy_event: PrivacyEventFn | None = None


__all__ = ["Algorithm", "InitFn", "PrivacyEventFn", "StepFn", "ValidateFn"]
