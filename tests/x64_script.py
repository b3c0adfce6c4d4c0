"""One small run of every family under float64 (started by ``tests/test_x64.py``).

usage: JAX_ENABLE_X64=1 python tests/x64_script.py [fast]

For one algorithm or more of each family (experts, quantile, bandits, demo) the script runs a
tiny :func:`ldpjax.engine.simulate` sweep, accounts the algorithm's privacy event and checks
that every floating output is float64 and finite. It also runs ``allocate_budget`` (both
solvers) and takes ``jax.grad`` of differentiable bounds and accountants. Every check runs even
when an earlier one fails; the script prints one ``PASS``/``FAIL`` line per check and exits
with the number of failures (0: all passed).

``fast`` (the fast suite) runs one algorithm or more of every family, ``allocate_budget`` with
the waterfill solver and all the gradients, and skips the checks in ``SLOW_ONLY`` (about half
of the script's compile time on two cores); without it (the slow suite) every check runs.
"""

from __future__ import annotations

import os
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np

import ldpjax.accounting as acc
import ldpjax.quantile as Q
from ldpjax import accounting, bandits, experts
from ldpjax.demo.noisy_counter import counter_params, noisy_counter
from ldpjax.engine import enable_compile_cache, make_key, record, rollout, simulate
from ldpjax.experts import agarwal_singh as AS

if os.environ.get("LDPJAX_CACHE_DIR"):  # the test session's compilation cache (tests/plugins/compile_cache.py)
    enable_compile_cache()

NUM_SEEDS = 2
DELTA = 1e-6
N, T = 4, 24  # experts: experts, rounds
K = 3  # bandits: arms
# Checks the fast run skips: the other algorithms of families that keep one in the fast run,
# and the optax solver of allocate_budget (the waterfill one and its gradient stay).
SLOW_ONLY = frozenset({
    "experts/rw_adabatch", "experts/rw_meta", "experts/agarwal_singh",
    "quantile/dp_sgd", "quantile/divide_and_conquer", "quantile/single",
    "bandits/batched_epsilon_greedy", "allocate_budget[optax]",
})
FAST = False  # set by main()


def _floats64(name, tree):
    """Every floating leaf of ``tree`` is float64 and finite."""
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        arr = np.asarray(leaf)
        if not np.issubdtype(arr.dtype, np.floating):
            continue
        where = f"{name}{jax.tree_util.keystr(path)}"
        assert arr.dtype == np.float64, f"{where}: dtype {arr.dtype}, expected float64"
        assert np.all(np.isfinite(arr)), f"{where}: not finite: {arr}"


def _sweep(name, algorithm, params, num_steps, inputs=None):
    """``simulate`` a few seeds, then account the privacy event; both float64 and finite."""
    result = simulate(algorithm, params, make_key(0), num_steps, num_seeds=NUM_SEEDS,
                      inputs=inputs, record=record.last())
    _floats64(f"{name}.record", result.record)
    _floats64(f"{name}.state", result.state)
    if algorithm.privacy_event is not None:
        eps = acc.epsilon(algorithm.privacy_event(params), DELTA)
        _floats64(f"{name}.epsilon", eps)


# ----------------------------------------------------------------------------- families
def experts_runs():
    gains = experts.bernoulli_gains(jax.random.key(0), T, N, 0.3)
    learners = experts.learner_set(experts.ridge_family(windows=(4,), strengths=("weak",)),
                                   experts.leader_family())
    tree_params = AS.min_noise_setting(1.0, N, T)
    yield "experts/rw_ftpl", lambda: _sweep(
        "rw_ftpl", experts.rw_ftpl(experts.FTPLConfig(N)), experts.ftpl_params(1.0), T, gains)
    yield "experts/rw_adabatch", lambda: _sweep(
        "rw_adabatch", experts.rw_adabatch(experts.AdaBatchConfig(N)),
        experts.adabatch_params(1.0, 0.5), T, gains)
    yield "experts/rw_meta", lambda: _sweep(
        "rw_meta", experts.rw_meta_algorithm(learners, N), experts.meta_params(1.0, learners), T,
        gains)
    yield "experts/agarwal_singh", lambda: _sweep(
        "agarwal_singh", AS.tree_hedge(AS.TreeHedgeConfig(N, T)),
        tree_params, T, gains)


def quantile_runs():
    clients = Q.make_clients(("normal", "laplace", "uniform"), loc=[-0.5, 0.0, 0.5])
    params = Q.quantile_params(0.4, 0.7, clients, weights=[0.5, 0.3, 0.2])
    steps = 20
    config = Q.LocalSGDConfig(steps, Q.C1)
    algorithms = {
        "local_sgd": Q.local_sgd(config),
        "dp_sgd": Q.dp_sgd(config),
        "divide_and_conquer": Q.divide_and_conquer(Q.DivideAndConquerConfig(steps)),
        "single": Q.single(Q.SingleConfig(steps)),
    }
    for name, algorithm in algorithms.items():
        yield f"quantile/{name}", lambda n=name, a=algorithm: _sweep(n, a, params, steps)


def bandits_runs():
    ctr = np.array([[0.5, 0.3, 0.1], [0.1, 0.2, 0.6]])
    env = bandits.make_environment(ctr, segment_probs=[0.6, 0.4])
    config = bandits.PolicyConfig(num_segments=2, max_arms=K)
    policy = bandits.epsilon_greedy(config)
    for strategy in ("constant", "dynamic", "arm_specific"):
        params = bandits.epsilon_greedy_params(env, strategy, 1.0)
        yield f"bandits/epsilon_greedy_{strategy}", lambda p=params, s=strategy: _sweep(
            f"epsilon_greedy_{s}", policy, p, 30)
    block_env = bandits.make_environment(ctr[0])
    block = bandits.batched_epsilon_greedy(bandits.BlockConfig(max_arms=K, growth=0.25))
    yield "bandits/batched_epsilon_greedy", lambda: _sweep(
        "batched", block, bandits.block_params(block_env, "dynamic", 1.0, horizon=64),
        bandits.num_blocks(64, 0.25))
    yield "bandits/allocate_budget", _allocations  # both solvers, and d bound / d Gamma


def _allocations():
    arms, visitors = jnp.asarray([2.0, 3.0, 5.0]), jnp.asarray([1e4, 1e5, 3e4])

    def total(budget):  # one trace for the allocation and its gradient in the firm budget
        alloc = bandits.allocate_budget(arms, visitors, budget)
        return alloc.total_bound, alloc

    grad, waterfill = jax.grad(total, has_aux=True)(jnp.float64(1.5))
    solvers = [("waterfill", waterfill)]
    if not (FAST and "allocate_budget[optax]" in SLOW_ONLY):
        solvers.append(("optax", bandits.allocate_budget(arms, visitors, 1.5, method="optax",
                                                         steps=200)))
    for method, alloc in solvers:
        _floats64(f"allocate_budget[{method}]", alloc)
        assert alloc.strategy.dtype == jnp.int32, alloc.strategy.dtype
        assert float(alloc.spent) <= 1.5 * (1 + 1e-9), alloc
    _floats64("d total_bound / d Gamma", grad)
    for name, alloc in (("equal_split", bandits.equal_split(arms, visitors, 1.5)),
                        ("unconstrained", bandits.unconstrained_allocation(arms, visitors))):
        _floats64(name, alloc)


def demo_runs():
    yield "demo/noisy_counter", lambda: _sweep("noisy_counter", noisy_counter(),
                                               counter_params(1.0), 20)


# ----------------------------------------------------------------------------- gradients
def _grad(name, fn, x):
    g = jax.grad(fn)(jnp.asarray(x, jnp.float64))
    _floats64(name, g)


def gradient_runs():
    k, t = jnp.float64(3.0), jnp.float64(1e4)
    yield "grad/bandits_regret_bound_constant", lambda: _grad(
        "d bound_constant / d gamma", lambda g: bandits.regret_bound_constant(g, k, t), 1.0)
    yield "grad/bandits_regret_bound_dynamic", lambda: _grad(
        "d bound_dynamic / d gamma", lambda g: bandits.regret_bound_dynamic(g, k, t), 1.0)
    yield "grad/experts_regret_bound_ftpl", lambda: _grad(
        "d ftpl bound / d mu", lambda mu: experts.regret_bound_ftpl(mu, T, N), 1.0)
    yield "grad/gdp_epsilon", lambda: _grad(
        "d gdp_epsilon / d mu", lambda mu: accounting.gdp_epsilon(mu, DELTA), 1.0)
    yield "grad/event_epsilon_composed", lambda: _grad(
        "d epsilon(composed) / d mu", lambda mu: acc.epsilon(
            acc.ComposedEvent((acc.GaussianEvent(mu), acc.GaussianEvent(0.5 * mu))), DELTA), 1.0)
    yield "grad/quantile_asymptotic_variance", lambda: _grad(
        "d asymptotic_variance / d r", lambda r: Q.asymptotic_variance(
            jnp.stack([r, 0.9]), jnp.asarray([0.5, 0.5]), jnp.asarray([0.4, 0.6]),
            jnp.asarray([0.3, 0.2])), 0.7)
    yield "grad/demo_rollout", lambda: _grad(
        "d squared error / d mu", lambda mu: rollout(
            noisy_counter(), counter_params(1.0)._replace(mu=mu), jax.random.key(0), 8
        )[1].squared_error, 1.0)


def main(fast: bool = False) -> int:
    global FAST
    FAST = fast
    if not jax.config.jax_enable_x64:
        print("FAIL setup: jax_enable_x64 is off (run with JAX_ENABLE_X64=1)")
        return 1
    failures = 0
    for family in (experts_runs, quantile_runs, bandits_runs, demo_runs, gradient_runs):
        try:
            checks = list(family())
        except Exception:  # a failing constructor is reported, the other families still run
            failures += 1
            print(f"FAIL {family.__name__} (setup)\n{traceback.format_exc()}", flush=True)
            continue
        for name, check in checks:
            if fast and name in SLOW_ONLY:
                continue
            try:
                check()
                print(f"PASS {name}", flush=True)
            except Exception as err:
                failures += 1
                tb = traceback.format_exc(limit=-4)
                print(f"FAIL {name}: {type(err).__name__}: {err}\n{tb}", flush=True)
    print(f"{failures} failure(s)")
    return min(failures, 100)


if __name__ == "__main__":
    sys.exit(main(fast=sys.argv[1:] == ["fast"]))
