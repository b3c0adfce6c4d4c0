"""A conformance checker for algorithms: test your own algorithm as ldpjax tests its own.

Describe the algorithm at a small size in a :class:`ConformanceCase` and call
:func:`check_conformance` (or one ``check_*`` function per property). Each check raises
``AssertionError`` with the case's name when the property fails, so it works in pytest, in
unittest or in a plain script. The properties (optax's ``_common_test.py``, blackjax's
``test_api_protocols.py``):

* :func:`check_contract`: an :class:`~ldpjax.engine.Algorithm` with ``init``, ``step`` and a
  ``validate`` hook that accepts the valid budgets; a ``privacy_event`` (when set) whose
  accountant gives a finite epsilon (``inf`` only for a declared
  :class:`~ldpjax.accounting.NoPrivacyEvent`);
* :func:`check_validate_rejects`: concrete invalid budgets and out-of-domain inputs raise
  ``ValueError`` from ``validate``;
* :func:`check_compiles_once`: ``jit`` + ``vmap`` over seeds x budgets of a plain
  ``lax.scan`` driver (:func:`run_case`, not the engine) traces once across two budget sweeps
  (a trace counter, as ``chex.assert_max_traces``), with finite outputs of the expected shapes;
* :func:`check_fails_closed_traced`: the invalid budgets, *traced*, make the run fail closed
  (``case.is_closed``): a NaN release or fully random reports, never the unperturbed data;
* :func:`check_state_structure`: the state's structure, shapes and dtypes after one ``step``
  equal those after ``init``;
* :func:`check_gradient`: ``jax.grad`` of ``case.scalar`` w.r.t. the budget is finite
  (:func:`check_conformance` computes it inside the one compiled sweep, at every valid budget
  and seed, instead of compiling a second program).

Example:
  >>> import jax.numpy as jnp
  >>> from ldpjax.demo import CounterParams, noisy_counter
  >>> case = ConformanceCase(
  ...     name="demo/noisy_counter", algorithm=noisy_counter(),
  ...     make_params=lambda mu: CounterParams(jnp.asarray(mu, jnp.float32), jnp.float32(0.5)),
  ...     budgets=(0.5, 2.0), invalid_budgets=(float("nan"), -1.0), num_steps=4,
  ...     scalar=lambda state, outputs: outputs.squared_error[-1],
  ...     is_closed=lambda state, outputs: jnp.all(jnp.isnan(outputs.error)))
  >>> check_conformance(case)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import ldpjax.accounting as acc
from ldpjax.engine import Algorithm

NUM_SEEDS = 3
#: XLA options of the checks' programs: tiny runs whose speed is irrelevant, so skip the
#: backend's expensive optimisation passes and use XLA CPU's elemental emitters instead of
#: its fusion emitters (compilation is most of a check's time, and these options make it
#: several times cheaper on CPU). Every property is checked on the values, which stay finite /
#: NaN as they are.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True,
                    "xla_cpu_use_fusion_emitters": False}


@dataclasses.dataclass(frozen=True)
class ConformanceCase:
    """One algorithm at a small size.

    Attributes:
      name: unique id, e.g. ``"experts/rw_ftpl"``.
      algorithm: the built :class:`~ldpjax.engine.Algorithm` (must set ``validate`` and, when it
        releases anything private, ``privacy_event``).
      make_params: ``budget -> params``: the params pytree at one privacy budget (a scalar array:
        mu, r, xi, ... as the algorithm names it); must be traceable (used under vmap/grad) and
        must not check its budget (``validate`` is the one that rejects concrete invalid ones).
      budgets: two valid budget values; the checks also use a second sweep built from them.
      invalid_budgets: concrete values that must raise ``ValueError`` from ``validate`` and, when
        traced, must fail closed (see ``is_closed``).
      num_steps: horizon of the small run.
      scalar: ``(final_state, stacked_outputs) -> scalar`` used for ``jax.grad`` w.r.t. the budget
        and finiteness checks.
      is_closed: ``(final_state, stacked_outputs) -> bool array``: True when a run whose budget was
        a traced invalid value failed closed (NaN release / fully random reports), i.e. nothing
        unperturbed came out.
      inputs: time-indexed inputs (leading axis >= num_steps) or None.
      bad_inputs: optional inputs outside the privacy domain (e.g. gains outside [0, 1]) that
        ``validate`` must reject with ``ValueError``; None if the algorithm takes no inputs.
      differentiable: whether ``jax.grad(scalar)`` w.r.t. the budget must be finite.
    """

    name: str
    algorithm: Algorithm
    make_params: Callable[[Any], Any]
    budgets: tuple[float, float]
    invalid_budgets: tuple[float, ...]
    num_steps: int
    scalar: Callable[[Any, Any], Any]
    is_closed: Callable[[Any, Any], Any]
    inputs: Any = None
    bad_inputs: Any = None
    differentiable: bool = True


def run_case(case: ConformanceCase, budget: Any, key: jax.Array) -> tuple[Any, Any]:
    """One run: ``init`` then ``lax.scan`` of ``step`` with per-step keys ``fold_in(run_key, t)``.

    Args:
      case: the algorithm and its small size.
      budget: the privacy budget handed to ``case.make_params`` (may be traced).
      key: a typed PRNG key; ``init`` gets ``split(key)[0]``.

    Returns:
      ``(final_state, stacked_outputs)``; outputs carry a leading axis of ``case.num_steps``.
    """
    params = case.make_params(budget)
    init_key, run_key = jax.random.split(key)
    state = case.algorithm.init(params, init_key)
    inputs = (
        None if case.inputs is None
        else jax.tree_util.tree_map(lambda x: x[: case.num_steps], case.inputs)
    )

    def body(state, scanned):
        t, inputs_t = scanned
        return case.algorithm.step(params, state, inputs_t, jax.random.fold_in(run_key, t))

    times = jnp.arange(case.num_steps, dtype=jnp.int32)
    return jax.lax.scan(body, state, (times, inputs), length=case.num_steps)


def compiled_sweep(case: ConformanceCase,
                   with_grad: bool = False) -> Callable[[Any, Any], tuple[Any, ...]]:
    """``jit`` of ``(budgets (B,), keys (S,)) -> (states, outputs)`` of shape (B, S, ...) that
    may be traced once: a second trace (a new shape, a budget that reaches Python control
    flow) raises ``AssertionError``. The count belongs to this sweep object alone (unlike
    ``chex.assert_max_traces``, whose counter is global), so checks can run repeatedly.

    With ``with_grad`` (and a ``case.differentiable``), the same compiled program also returns
    ``jax.grad`` of ``case.scalar`` w.r.t. each budget, ``(states, outputs, grads)`` with grads
    of shape (B, S): one compilation serves :func:`check_compiles_once`,
    :func:`check_fails_closed_traced` and the gradient check (:func:`check_conformance`)."""
    if with_grad and case.differentiable:
        def objective(b, k):
            state, outputs = run_case(case, b, k)
            return case.scalar(state, outputs), (state, outputs)

        def one_run(b, k):
            (_, (state, outputs)), grad = jax.value_and_grad(objective, has_aux=True)(b, k)
            return state, outputs, grad
    else:
        def one_run(b, k):
            return run_case(case, b, k)

    per_seed = jax.vmap(one_run, in_axes=(None, 0))
    sweep_fn = jax.vmap(per_seed, in_axes=(0, None))
    traces = [0]

    def sweep(budgets, keys):
        traces[0] += 1
        if traces[0] > 1:
            raise AssertionError(f"the sweep of {case.name} is traced > 1 times")
        return sweep_fn(budgets, keys)

    sweep.__name__ = f"sweep_{case.name.replace('/', '_')}"
    return jax.jit(sweep, compiler_options=COMPILER_OPTIONS)


def _keys(num_seeds: int) -> jax.Array:
    return jax.random.split(jax.random.key(0), num_seeds)


def _fail(case: ConformanceCase, message: str) -> AssertionError:
    return AssertionError(f"{case.name}: {message}")


def _raises_value_error(fn: Callable[[], Any]) -> bool:
    try:
        fn()
    except ValueError:
        return True
    return False


def check_contract(case: ConformanceCase) -> None:
    """The contract and the privacy claim (see the module docstring)."""
    algorithm = case.algorithm
    if not isinstance(algorithm, Algorithm):
        raise _fail(case, f"not an ldpjax.engine.Algorithm: {type(algorithm).__name__}")
    if not (callable(algorithm.init) and callable(algorithm.step)):
        raise _fail(case, "init and step must be callable")
    if not callable(algorithm.validate):
        raise _fail(case, "has no validate hook")
    for budget in case.budgets:
        try:
            algorithm.validate(case.make_params(budget), case.inputs)
        except ValueError as err:
            raise _fail(case, f"validate rejects the valid budget {budget}: {err}") from err
    if algorithm.privacy_event is None:
        return
    event = algorithm.privacy_event(case.make_params(case.budgets[0]))
    eps = float(np.max(np.asarray(acc.epsilon(event, 1e-6))))
    if isinstance(event, acc.NoPrivacyEvent):  # a documented non-private baseline
        if eps != np.inf:
            raise _fail(case, f"NoPrivacyEvent must account to inf, got {eps}")
    elif not (np.isfinite(eps) and eps >= 0):
        raise _fail(case, f"privacy event {event!r} gives epsilon {eps} at delta 1e-6")


def check_validate_rejects(case: ConformanceCase) -> None:
    """Concrete invalid budgets and ``case.bad_inputs`` raise ``ValueError`` from ``validate``."""
    validate = case.algorithm.validate
    for bad in case.invalid_budgets:
        if not _raises_value_error(lambda b=bad: validate(case.make_params(b), case.inputs)):
            raise _fail(case, f"validate accepts the invalid budget {bad}")
    if case.bad_inputs is not None:
        params = case.make_params(case.budgets[0])
        if not _raises_value_error(lambda: validate(params, case.bad_inputs)):
            raise _fail(case, "validate accepts inputs outside the privacy domain (bad_inputs)")


def check_compiles_once(case: ConformanceCase, sweep: Callable | None = None,
                        num_seeds: int = NUM_SEEDS) -> Callable:
    """Two budget sweeps through one compiled ``jit(vmap(vmap(scan)))``: one trace, the
    expected shapes (budgets, seeds, steps) and a finite ``case.scalar``.

    Returns:
      the compiled sweep (pass it to :func:`check_fails_closed_traced` to check that invalid
      budgets do not retrace either).
    """
    sweep = compiled_sweep(case) if sweep is None else sweep
    keys = _keys(num_seeds)
    b0, b1 = case.budgets
    for pair in ((b0, b1), (b1, 0.5 * (b0 + b1))):
        try:
            states, outputs, *grads = sweep(jnp.asarray(pair, jnp.float32), keys)
        except AssertionError as err:
            raise _fail(case, f"the budget sweep compiled more than once ({err})") from err
        for leaf in jax.tree_util.tree_leaves(outputs):
            if leaf.shape[:3] != (2, num_seeds, case.num_steps):
                raise _fail(case, f"output leaf of shape {leaf.shape}, expected "
                                  f"(budgets, seeds, steps) = {(2, num_seeds, case.num_steps)}")
        for leaf in jax.tree_util.tree_leaves(states):
            if leaf.shape[:2] != (2, num_seeds):
                raise _fail(case, f"state leaf of shape {leaf.shape}, expected "
                                  f"(budgets, seeds) = {(2, num_seeds)} first")
        scalar = np.asarray(jax.vmap(jax.vmap(case.scalar))(states, outputs))
        if not np.all(np.isfinite(scalar)):
            raise _fail(case, f"non-finite scalar at the valid budgets {pair}: {scalar}")
        if grads:  # a sweep built with_grad: the gradient check rides on the same program
            grad = np.asarray(grads[0])
            if not np.all(np.isfinite(grad)):
                raise _fail(case, f"jax.grad w.r.t. the budget is {grad} at the budgets {pair}")
    return sweep


def check_fails_closed_traced(case: ConformanceCase, sweep: Callable | None = None,
                              num_seeds: int = NUM_SEEDS) -> None:
    """The invalid budgets, traced through the compiled sweep (in pairs), fail closed."""
    sweep = compiled_sweep(case) if sweep is None else sweep
    keys = _keys(num_seeds)
    bad = list(case.invalid_budgets)
    for start in range(0, len(bad), 2):
        pair = (bad[start:start + 2] + bad[:1])[:2]
        try:
            states, outputs, *_ = sweep(jnp.asarray(pair, jnp.float32), keys)
        except AssertionError as err:
            raise _fail(case, f"invalid budgets retraced the sweep ({err})") from err
        closed = np.asarray(jax.vmap(jax.vmap(case.is_closed))(states, outputs))
        if not np.all(closed):
            raise _fail(case, f"traced invalid budgets {pair} did not fail closed: {closed}")


def check_state_structure(case: ConformanceCase) -> None:
    """``step`` returns a state of the same structure, shapes and dtypes as ``init``."""
    params = case.make_params(jnp.float32(case.budgets[0]))
    state0 = jax.eval_shape(case.algorithm.init, params, jax.random.key(1))
    inputs0 = None if case.inputs is None else jax.tree_util.tree_map(lambda x: x[0], case.inputs)
    state1, _ = jax.eval_shape(case.algorithm.step, params, state0, inputs0, jax.random.key(2))
    if jax.tree_util.tree_structure(state0) != jax.tree_util.tree_structure(state1):
        raise _fail(case, "step changes the state's structure")
    for a, b in zip(jax.tree_util.tree_leaves(state0), jax.tree_util.tree_leaves(state1),
                    strict=True):
        if (a.shape, a.dtype) != (b.shape, b.dtype):
            raise _fail(case, f"a state leaf changes from {a.shape} {a.dtype} after init to "
                              f"{b.shape} {b.dtype} after step")


def check_gradient(case: ConformanceCase) -> None:
    """``jax.grad`` of ``case.scalar`` w.r.t. the first budget is finite (if differentiable)."""
    if not case.differentiable:
        return
    key = jax.random.key(3)

    def objective(budget):
        state, outputs = run_case(case, budget, key)
        return case.scalar(state, outputs)

    grad = float(jax.jit(jax.grad(objective), compiler_options=COMPILER_OPTIONS)(
        jnp.float32(case.budgets[0])))
    if not np.isfinite(grad):
        raise _fail(case, f"jax.grad w.r.t. the budget is {grad}")


def check_conformance(case: ConformanceCase, num_seeds: int = NUM_SEEDS) -> None:
    """Every property above, in order, through one compiled program: the sweep of the valid
    budgets also computes ``jax.grad`` of ``case.scalar`` w.r.t. each budget (``with_grad``;
    finite at every valid budget and seed, as :func:`check_gradient` checks at one), and the
    traced invalid budgets reuse it (so they must not retrace it either).

    Raises:
      AssertionError: naming the case and the property that failed.
    """
    check_contract(case)
    check_validate_rejects(case)
    check_state_structure(case)
    sweep = check_compiles_once(case, compiled_sweep(case, with_grad=True), num_seeds=num_seeds)
    check_fails_closed_traced(case, sweep, num_seeds=num_seeds)


__all__ = [
    "ConformanceCase",
    "check_compiles_once",
    "check_conformance",
    "check_contract",
    "check_fails_closed_traced",
    "check_gradient",
    "check_state_structure",
    "check_validate_rejects",
    "compiled_sweep",
    "run_case",
]
