"""The pure part of the engine: one run as ``lax.scan`` over time, its key schedule, and the
batched (``vmap``-ed, optionally sharded) kernels that :func:`ldpjax.engine.simulate` calls.

Key schedule (see :mod:`ldpjax.engine.keys`): run ``(grid point g, seed s)`` uses
``init_key, run_key = split(fold_in(base, s))`` with ``base = key`` (common random numbers) or
``fold_in(key, g)`` (independent grid points); step t uses ``fold_in(run_key, t)``. Nothing
depends on how runs are batched or time is chunked.
"""

from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ldpjax import _xla
from ldpjax.engine import record as record_lib
from ldpjax.engine.base import Algorithm
from ldpjax.engine.compile import kernel_compiler_options
from ldpjax.engine.hints import ExecutionHints, hints_or_default
from ldpjax.engine.keys import as_typed_key, convert_key, resolve_rng, seed_keys
from ldpjax.mechanisms._domain import no_privacy_permitted
from ldpjax.types import PRNGKey, PyTree

AXIS = "runs"


def inputs_at(inputs: PyTree, t: int) -> PyTree:
    return jax.tree_util.tree_map(lambda x: x[t], inputs)


def run_base_key(key, stream):
    """The key a run's seed is folded into: ``key``, or ``fold_in(key, stream)`` per grid point."""
    return key if stream is None else jax.random.fold_in(key, stream)


def init_run(algorithm, recorder, num_steps, params, key, seed_index, inputs0, stream=None):
    init_key, run_key = seed_keys(run_base_key(key, stream), seed_index)
    state = algorithm.init(params, init_key)
    _, out_spec = jax.eval_shape(algorithm.step, params, state, inputs0, run_key)
    return state, recorder.init(out_spec, num_steps)


def advance(
    algorithm, recorder, num_steps, length, params, key, seed_index, state, acc, t0, xs,
    stream=None, unroll=1,
):
    _, run_key = seed_keys(run_base_key(key, stream), seed_index)
    times = t0 + jnp.arange(length, dtype=jnp.int32)

    def body(carry, scanned):
        state, acc = carry
        t, inputs_t = scanned
        state, outputs = algorithm.step(params, state, inputs_t, jax.random.fold_in(run_key, t))
        return (state, recorder.update(acc, outputs, t, num_steps)), None

    (state, acc), _ = jax.lax.scan(body, (state, acc), (times, xs), length=length,
                                   unroll=unroll)
    return state, acc


def rollout(
    algorithm: Algorithm,
    params: PyTree,
    key: PRNGKey,
    num_steps: int | None = None,
    *,
    inputs: PyTree = None,
    record: record_lib.Recorder | None = None,
    seed_index: int = 0,
    rng: str | None = None,
    hints: ExecutionHints | None = None,
) -> tuple[PyTree, PyTree]:
    """One run of ``num_steps`` steps as a pure function: returns ``(final_state, record)``.

    Uses exactly the keys of run ``seed_index`` in :func:`~ldpjax.engine.simulate` (pass the
    same ``rng``), so ``rollout(..., seed_index=s)`` reproduces seed s of a sweep. A secure key
    (:func:`ldpjax.mechanisms.secure_key`) takes ``rng=None`` only (``ValueError``: it is never
    converted); releases of real data go through :func:`ldpjax.engine.release_run`. Concrete
    +inf budgets in ``params`` (mu = inf) are honoured as "no noise"; traced ones (``rollout``
    under your own ``jit``) give NaN releases. float16 / bfloat16 params raise ``ValueError``.
    Concrete ``params`` (with concrete or no ``inputs``) go through the algorithm's
    ``validate`` hook first, as in ``simulate`` (``ValueError`` naming the leaf, e.g. a
    budget mu = -1); traced ones are left to the mechanisms, which fail closed.
    ``hints`` (:class:`~ldpjax.engine.ExecutionHints`): its ``scan_unroll`` is the scan's
    unroll (the other hints concern the batched kernels of ``simulate``).
    ``jit``/``vmap``/``grad``-able (gradients flow through the scan to the numeric ``params``).
    """

    from ldpjax._validation import is_concrete
    from ldpjax.engine.checks import check_precision_tree, grants_no_privacy, validate_algorithm

    unroll = hints_or_default(hints).scan_unroll
    check_precision_tree("params", params)
    if is_concrete((params, inputs)):  # the checks simulate makes on its concrete grid
        validate_algorithm(algorithm, params, inputs, (), 0)
    if grants_no_privacy(algorithm, params):  # concrete +inf budgets: checked here, so honoured
        with no_privacy_permitted():
            return _rollout(algorithm, params, key, num_steps, inputs, record, seed_index, rng,
                            unroll)
    return _rollout(algorithm, params, key, num_steps, inputs, record, seed_index, rng, unroll)


def _rollout(algorithm, params, key, num_steps, inputs, record, seed_index, rng, unroll):
    from ldpjax.engine.checks import num_steps_of  # local: checks imports this module

    num_steps = num_steps_of(num_steps, inputs)
    recorder = record if record is not None else record_lib.last()
    key = as_typed_key(key)
    key = convert_key(key, resolve_rng(rng, key))
    inputs = jax.tree_util.tree_map(lambda x: x[:num_steps], inputs)
    inputs0 = None if inputs is None else inputs_at(inputs, 0)
    state, acc = init_run(algorithm, recorder, num_steps, params, key, seed_index, inputs0)
    state, acc = advance(
        algorithm, recorder, num_steps, num_steps, params, key, seed_index, state, acc, 0, inputs,
        unroll=unroll,
    )
    return state, recorder.finalize(acc, num_steps)


# --------------------------------------------------------------------------- batched kernels
def take(params_flat, index):
    return jax.tree_util.tree_map(lambda x: x[index], params_flat)


def run_params_spec(params_flat: PyTree) -> PyTree:
    """Abstract params of one run (``ShapeDtypeStruct`` leaves without the batch axis): what
    :func:`run_specs` needs, without an eager slicing op per leaf."""
    return jax.tree_util.tree_map(
        lambda x: jax.ShapeDtypeStruct(
            jnp.shape(x)[1:], jnp.result_type(x), weak_type=bool(getattr(x, "weak_type", False))
        ),
        params_flat,
    )


def _abstract(tree: PyTree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((tuple(jnp.shape(x)), jnp.result_type(x)) for x in leaves)


class _SpecCache:
    """Least-recently-used map from a run's static signature to its abstract specs.

    (An ``lru_cache`` over a function that also took the ``probe`` closure never hit: every call
    builds a new closure.)
    """

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self.entries: collections.OrderedDict = collections.OrderedDict()

    def get(self, signature, probe):
        if signature in self.entries:
            self.entries.move_to_end(signature)
            return self.entries[signature]
        specs = probe()
        self.entries[signature] = specs
        if len(self.entries) > self.maxsize:
            self.entries.popitem(last=False)
        return specs

    def cache_clear(self) -> None:
        self.entries.clear()


_specs_cached = _SpecCache()


def run_specs(algorithm, recorder, num_steps, one_params, key, inputs0):
    """Abstract (state, acc, outputs, record) of one run; cached per algorithm, recorder and
    input shapes so a repeated sweep does not trace the algorithm again. ``one_params``: one
    run's params, concrete or abstract (:func:`run_params_spec`)."""

    def probe():
        state_spec, acc_spec = jax.eval_shape(
            lambda p: init_run(algorithm, recorder, num_steps, p, key, 0, inputs0), one_params
        )
        _, out_spec = jax.eval_shape(algorithm.step, one_params, state_spec, inputs0, key)
        rec_spec = jax.eval_shape(lambda a: recorder.finalize(a, num_steps), acc_spec)
        return state_spec, acc_spec, out_spec, rec_spec

    key_sig = (tuple(key.shape), str(key.dtype))
    signature = (  # the x64 mode too: an algorithm's own arrays change dtype with it
        algorithm, recorder, num_steps, _abstract(one_params), _abstract(inputs0), key_sig,
        bool(jax.config.jax_enable_x64),
    )
    return _specs_cached.get(signature, probe)


def kernels(algorithm, recorder, num_steps, length, mesh, common_random_numbers=True,
            grid_points=None, hints=None):
    """Jitted batched init / advance / finalize for one static configuration (cached).

    The cache compares the recorder by value (:class:`~ldpjax.engine.record.Recorder`), the
    algorithm by its functions, ``mesh`` by its devices and ``hints`` (an
    :class:`~ldpjax.engine.ExecutionHints`: the scan's unroll and the CPU compiler options)
    by value.

    ``grid_points`` (one device, no mesh; for runs with ``ExecutionHints(grid_major=True)``):
    the batch is ``grid_points`` blocks of the same seeds (slot ``i`` is run
    ``(i // size, seeds[i % size])``, as :meth:`~ldpjax.engine.plan.ChunkPlan.run_indices` lays
    it out without padding), and ``advance`` vmaps over the grid points and, inside, over the
    seeds: the params-only work of a step runs once per grid point, and with common random numbers its
    key and random words once per seed. ``None``: one ``vmap`` over the runs, each gathering
    its params. Both give the same runs with the same keys.
    """
    if grid_points is not None and mesh is not None:
        raise ValueError("grid_points (the grid-major layout) is for one device, without a mesh")
    # one cache key however the call is spelled (defaults given or not)
    return _kernels(algorithm, recorder, num_steps, length, mesh, bool(common_random_numbers),
                    grid_points, hints_or_default(hints))


@functools.lru_cache(maxsize=256)
def _kernels(algorithm, recorder, num_steps, length, mesh, common_random_numbers, grid_points,
             hints):
    unroll = hints.scan_unroll
    out_sharding = None if mesh is None else NamedSharding(mesh, PartitionSpec(AXIS))

    def stream(p):
        return None if common_random_numbers else p

    def init(params_flat, key, param_idx, seed_idx, inputs0):
        def one(p, s):
            return init_run(
                algorithm, recorder, num_steps, take(params_flat, p), key, s, inputs0, stream(p)
            )

        return jax.vmap(one)(param_idx, seed_idx)

    def adv(params_flat, key, param_idx, seed_idx, state, acc, t0, xs):
        def one(p, s, state, acc):
            return advance(
                algorithm, recorder, num_steps, length, take(params_flat, p), key, s, state, acc,
                t0, xs, stream(p), unroll,
            )

        return jax.vmap(one)(param_idx, seed_idx, state, acc)

    def adv_grid(params_flat, key, param_idx, seed_idx, state, acc, t0, xs):
        del param_idx  # grid-major: run i is grid point i // size
        runs = seed_idx.shape[0]
        size = runs // grid_points

        def block(x):
            return x.reshape((grid_points, size) + x.shape[1:])

        def point(p, params, seeds, state, acc):
            def one(s, state, acc):
                return advance(
                    algorithm, recorder, num_steps, length, params, key, s, state, acc, t0, xs,
                    stream(p), unroll,
                )

            return jax.vmap(one)(seeds, state, acc)

        # every block holds the same seeds (shared, so per-seed work is not repeated per point)
        out = jax.vmap(point, in_axes=(0, 0, None, 0, 0))(
            jnp.arange(grid_points, dtype=jnp.int32), params_flat, seed_idx[:size],
            *jax.tree_util.tree_map(block, (state, acc)))
        return jax.tree_util.tree_map(lambda x: x.reshape((runs,) + x.shape[2:]), out)

    def finalize(acc):
        return jax.vmap(lambda a: recorder.finalize(a, num_steps))(acc)

    # the run's CPU options and, with jaxlib 0.10.2, its miscompilation's guard (ldpjax._xla)
    options = hints.cpu_compiler_options + _xla.kernel_options()
    jit = functools.partial(jax.jit, out_shardings=out_sharding,
                            compiler_options=kernel_compiler_options(options))
    # Donating the carried state saves memory on accelerators; CPU cannot use donated buffers.
    donate = () if jax.default_backend() == "cpu" else (4, 5)
    stepper = adv if grid_points is None else adv_grid
    return jit(init), jit(stepper, donate_argnums=donate), jit(finalize)


kernels.cache_info = _kernels.cache_info
kernels.cache_clear = _kernels.cache_clear


def make_mesh(devices) -> Mesh | None:
    import numpy as np

    return Mesh(np.asarray(devices), (AXIS,)) if len(devices) > 1 else None


__all__ = ["advance", "init_run", "kernels", "rollout", "run_params_spec", "run_specs"]
