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
    """A pure ``(init, step)`` pair. Build it once (e.g. in a cached factory) and reuse it.

    Attributes:
      init: ``init(params, key) -> state``.
      step: ``step(params, state, inputs, key) -> (state, outputs)``.
      validate: optional ``validate(params, inputs) -> None``; raises ``ValueError`` naming the
        offending leaf when a *concrete* params pytree (one grid point or a whole stacked grid)
        or the time-indexed inputs are outside the domain the privacy claim assumes.
        :func:`ldpjax.engine.simulate` calls it before compiling. Traced values are not
        checked here; the mechanisms then fail closed (NaN release).
      privacy_event: optional ``privacy_event(params) -> event``: the per-record privacy claim
        of one run at ``params`` as a :mod:`ldpjax.mechanisms.events` event, which the
        accountants (``epsilon``, ``delta``, ``tradeoff``) take. ``None`` for algorithms that
        release nothing private (non-private baselines, the demo's data generator).
      grid_major: optional ``True`` when the step's results do not depend on how the engine
        lays a batch out: on one device :func:`ldpjax.engine.simulate` then ``vmap``-s over
        grid points and, inside, over seeds (:func:`ldpjax.engine.rollout.kernels`), so the
        work that depends on the params only is done once per grid point, and with common
        random numbers the step keys and random words once per seed. XLA may contract a
        product and a sum into one fused multiply-add in one layout and not in the other, so a
        step that combines values the layouts broadcast differently in ``a * b + c`` can round
        differently: set it only for steps whose float arithmetic on such values is exact or
        free of that pattern, and test the records against the flat layout (bit-identical).
        Default ``False``: one ``vmap`` over the runs.
      cpu_compiler_options: optional XLA options, as ``(name, value)`` pairs, for the engine's
        kernels of this algorithm on a CPU backend (ignored on GPU/TPU); they are part of the
        persistent compile cache's key. :data:`ldpjax.engine.ELEMENTAL_EMITTERS` (XLA CPU's
        elemental emitters instead of its fusion emitters) compiles the experts and DP-SGD
        steps in about 0.6 of the time at the same speed, and makes Local SGD up to ~2.8x and
        the bandits' binomial loops ~2x slower; ``docs/pages/engine.md`` has the measurements.
        The options change code generation only: the results can differ from the default
        options' in the last bits (contracted multiply-adds), not in law. Default ``()``: XLA's defaults.
      scan_unroll: optional static int >= 1, the ``unroll`` of the engine's ``lax.scan`` over
        time: that many steps per trip of the compiled loop. For a small step (a few dozen
        operations per run, as the bandits' per-visitor policy) the loop's own cost per trip
        is a large share of the step, and 2 makes it ~1.2x faster on XLA's CPU backend; a large
        step gains nothing and compiles for longer (``docs/pages/engine.md`` has the
        measurements). The steps, their keys and their order are unchanged; as with
        ``cpu_compiler_options``, float results can differ from ``scan_unroll=1``'s in the last
        bits (a multiply-add contracted in one body and not the other), not in law. The
        bandits' fast step (integer counts and comparisons) gives bit-identical records
        (tested). Default 1.
    """

    init: InitFn
    step: StepFn
    validate: ValidateFn | None = None
    privacy_event: PrivacyEventFn | None = None
    grid_major: bool = False
    cpu_compiler_options: tuple[tuple[str, Any], ...] = ()
    scan_unroll: int = 1


__all__ = ["Algorithm", "InitFn", "PrivacyEventFn", "StepFn", "ValidateFn"]
