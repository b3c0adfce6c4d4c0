"""The bench's workloads: one paper-shaped sweep per family, run through ldpjax and NumPy.

Each :class:`Workload` has sizes (``tiny`` for tests, ``small`` -- a quick run per side --,
``paper`` -- the shapes of the paper sweeps) and a ``prepare`` function that
builds, once, both sides of the comparison:

* the ldpjax side: the family's public algorithm factory and params builder run through
  :func:`ldpjax.engine.simulate` (one algorithm and one recorder object per workload, so the
  steady-state calls hit the compiled kernel);
* the NumPy side: :mod:`ldpjax_experiments.bench.numpy_reference` on the same settings and inputs (for
  ``quantile-authors-loop``: the per-sample loop of :mod:`ldpjax_experiments.bench.authors_loop` on a
  documented share ``loop_reps / reps`` of the replications, its time scaled by the inverse);
* the statistic: one scalar per seed. ldpjax runs grid points with common random numbers
  (seed s sees the same keys at every grid point), so the statistic averages a seed's runs
  over the grid first -- the per-seed values are then independent, and their mean has the
  standard error sd / sqrt(seeds). NumPy's runs are all independent; it is reduced the same
  way, so both sides estimate the same expectation;
* the random words the workload needs: the number of 32-bit random words an exact
  implementation must draw (one per float32 uniform or normal, two per float64 one), counting
  only the randomness the algorithm's distribution requires -- e.g. one uniform per quantile
  report (the reported bit is Bernoulli(r (1 - F(q)) + (1 - r) / 2)), two per bandit visitor,
  n normals per RW-AdaBatch *batch* (its buffered releases are never observed), none for a
  noise-free grid point. Divided by the fastest generator's rate this is the RNG floor.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax_experiments.bench import numpy_reference as ref
from ldpjax_experiments.bench.authors_loop import local_sgd_loop
from ldpjax_experiments.bench.workload import SIZES, Context, Prepared, Workload, words_per_float  # noqa: F401


def _per_seed(values, grid_axes: int) -> np.ndarray:
    """Average a (grid..., seeds) array over its grid axes: one value per seed."""
    values = np.asarray(values, np.float64)
    return values.reshape((-1,) + values.shape[grid_axes:]).mean(0) if grid_axes else values


# Module-level selectors: one object each, so recorders built from them compare equal.
def _estimate(outputs):
    return outputs.estimate


def _gain(outputs):
    return outputs.gain


def _regret(outputs):
    return outputs.regret


def _error(outputs):
    return outputs.error


# --------------------------------------------------------------------------- quantile
def _quantile_cell(size: dict, ctx: Context):
    """The C1 cell of both quantile workloads: (settings, shape, ldpjax side)."""
    from ldpjax import quantile as Q
    from ldpjax.engine import record

    k, budget, reps, tau = size["clients"], size["budget"], size["reps"], size["tau"]
    cell = {"tau": tau, "r": np.linspace(0.25, 0.9, k), "loc": np.linspace(-1.0, 1.0, k),
            "weights": np.full(k, 1.0 / k)}
    config = Q.LocalSGDConfig(budget, Q.C1)
    cell["local_steps"] = config.local_steps
    algorithm = Q.local_sgd(config)
    params = Q.quantile_params(tau, cell["r"], Q.make_clients("normal", loc=cell["loc"]),
                               cell["weights"])
    recorder = record.last(_estimate)

    def run_ldpjax():
        return np.asarray(
            ctx.simulate(algorithm, params, config.num_rounds, num_seeds=reps, record=recorder),
            np.float64,
        )

    shape = f"C1 Local SGD, K = {k}, t_T = {budget}, tau = {tau}, r = 0.25..0.9, {reps} reps"
    return cell, shape, run_ldpjax


def _prepare_quantile(size: dict, ctx: Context) -> Prepared:
    cell, shape, run_ldpjax = _quantile_cell(size, ctx)
    reps = size["reps"]

    def run_numpy(seed):
        estimate, variance = ref.local_sgd(
            np.random.default_rng(seed), cell["tau"], cell["r"], cell["loc"], cell["weights"],
            cell["local_steps"], reps,
        )
        return estimate, {"mean_sqrt_v": float(np.mean(np.sqrt(variance)))}

    return Prepared(
        shape=shape,
        statistic="mean estimate",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: reps * size["clients"] * size["budget"] * words_per_float(),
    )


def _prepare_quantile_authors_loop(size: dict, ctx: Context) -> Prepared:
    """The quantile cell against a per-sample Python loop (:mod:`ldpjax_experiments.bench.authors_loop`).

    The loop costs the same for every replication, so it runs ``loop_reps`` of the cell's
    ``reps`` replications and its time is scaled by ``reps / loop_reps``.
    """
    cell, shape, run_ldpjax = _quantile_cell(size, ctx)
    reps, loop_reps = size["reps"], size["loop_reps"]

    def run_numpy(seed):
        estimate, variance = local_sgd_loop(
            np.random.default_rng(seed), cell["tau"], cell["r"], cell["loc"], cell["weights"],
            cell["local_steps"], loop_reps,
        )
        return estimate, {"mean_sqrt_v": float(np.mean(np.sqrt(variance))),
                          "replications": loop_reps}

    return Prepared(
        shape=f"{shape}; the loop times {loop_reps} of them (x {reps / loop_reps:g})",
        statistic="mean estimate",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: reps * size["clients"] * size["budget"] * words_per_float(),
        numpy_scale=reps / loop_reps,
        baseline="authors-loop",
    )


# --------------------------------------------------------------------------- bandits
MBA_CTR = (0.324, 0.295)
MBA_GAMMAS = (0.05, 0.5, 1.0, 3.0, 5.0)


def _prepare_bandits(size: dict, ctx: Context) -> Prepared:
    from ldpjax import bandits
    from ldpjax.bandits.budgets import strategy_code
    from ldpjax.engine import product_grid, record

    horizon, seeds = size["horizon"], size["seeds"]
    codes = (strategy_code("constant"), strategy_code("capped"))
    env = bandits.make_environment(np.asarray(MBA_CTR))
    base = bandits.epsilon_greedy_params(env, "constant", 1.0)
    params = product_grid(
        base, strategy=jnp.asarray(codes, jnp.int32), gamma=jnp.asarray(MBA_GAMMAS)
    )
    algorithm = bandits.epsilon_greedy(bandits.PolicyConfig())
    hints = bandits.epsilon_greedy_hints(bandits.PolicyConfig())
    recorder = record.total(_regret)
    grid = (len(codes), len(MBA_GAMMAS))

    def run_ldpjax():
        out = ctx.simulate(
            algorithm, params, horizon, num_seeds=seeds, grid_ndim=2, record=recorder,
            hints=hints,
        )
        return _per_seed(out, 2)

    # NumPy runs: (strategy, gamma, seed) flattened; codes 0 = constant, 2 = capped.
    strategy = np.repeat(np.array([0, 2]), len(MBA_GAMMAS) * seeds)
    gamma = np.tile(np.repeat(np.asarray(MBA_GAMMAS), seeds), 2)

    def run_numpy(seed):
        regret = ref.epsilon_greedy(np.random.default_rng(seed), np.asarray(MBA_CTR), strategy,
                                    gamma, horizon)
        return _per_seed(regret.reshape(grid + (seeds,)), 2), {}

    return Prepared(
        shape=(f"MBA epsilon-greedy, K = 2, T = {horizon}, 2 strategies x 5 gamma x "
               f"{seeds} runs"),
        statistic="mean total regret",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: 2 * seeds * horizon * 2 * len(MBA_GAMMAS) * words_per_float(),
    )


# --------------------------------------------------------------------------- experts
def _eta(mus, n):
    """Release noise scale: sqrt(n) / mu, sqrt 2 at mu = inf (as ldpjax.experts.privacy)."""
    mus = np.asarray(mus, np.float64)
    finite = np.isfinite(mus)
    return np.where(finite, math.sqrt(n) / np.where(finite, mus, 1.0), math.sqrt(2.0))


def _bernoulli_inputs(size):
    from ldpjax.experts import bernoulli_gains

    gains = bernoulli_gains(jax.random.key(0), size["horizon"], size["experts"], size["gap"])
    return gains, np.asarray(gains, np.float64)


def _prepare_ftpl(size: dict, ctx: Context) -> Prepared:
    from ldpjax.engine import product_grid, record
    from ldpjax.experts import EXPERTS_HINTS, FTPLConfig, ftpl_params, rw_ftpl

    n, horizon, seeds, mus = size["experts"], size["horizon"], size["seeds"], size["mu"]
    gains, gains_np = _bernoulli_inputs(size)
    algorithm = rw_ftpl(FTPLConfig(n))
    params = product_grid(ftpl_params(1.0), mu=list(mus))
    recorder = record.total(_gain)
    eta = np.repeat(_eta(mus, n), seeds)

    def run_ldpjax():
        out = ctx.simulate(algorithm, params, horizon, num_seeds=seeds, inputs=gains,
                           grid_ndim=1, record=recorder, hints=EXPERTS_HINTS)
        return _per_seed(out, 1)

    def run_numpy(seed):
        earned = ref.rw_ftpl(np.random.default_rng(seed), gains_np, eta)
        return _per_seed(earned.reshape(len(mus), seeds), 1), {}

    return Prepared(
        shape=(f"RW-FTPL, n = {n}, T = {horizon}, Bernoulli gains (gap {size['gap']}), "
               f"{seeds} seeds x {len(mus)} mu"),
        statistic="mean total gain",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: len(mus) * seeds * (horizon + 1) * n * words_per_float(),
    )


def _prepare_adabatch(size: dict, ctx: Context) -> Prepared:
    from ldpjax.engine import product_grid, record
    from ldpjax.experts import EXPERTS_HINTS, AdaBatchConfig, adabatch_params, rw_adabatch

    n, horizon, seeds, mus = size["experts"], size["horizon"], size["seeds"], size["mu"]
    alpha = size["alpha"]
    gains, gains_np = _bernoulli_inputs(size)
    algorithm = rw_adabatch(AdaBatchConfig(n))
    params = product_grid(adabatch_params(1.0, alpha), mu=list(mus))
    recorder = record.total(_gain)
    eta = np.repeat(_eta(mus, n), seeds)

    def run_ldpjax():
        out = ctx.simulate(algorithm, params, horizon, num_seeds=seeds, inputs=gains,
                           grid_ndim=1, record=recorder, hints=EXPERTS_HINTS)
        return _per_seed(out, 1)

    def run_numpy(seed):
        earned, batches = ref.rw_adabatch(np.random.default_rng(seed), gains_np, eta, alpha)
        info = {"batches": int(batches.sum()), "mean_batch_length": horizon / batches.mean()}
        return _per_seed(earned.reshape(len(mus), seeds), 1), info

    return Prepared(
        shape=(f"RW-AdaBatch, n = {n}, T = {horizon}, alpha = {alpha}, Bernoulli gains "
               f"(gap {size['gap']}), {seeds} seeds x {len(mus)} mu"),
        statistic="mean total gain",
        # z_0 per run plus one sqrt(B) N(0, I) draw per batch (measured on the NumPy side)
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: (len(mus) * seeds + info["batches"]) * n * words_per_float(),
    )


def _covid_inputs(size):
    from ldpjax.experts import synthetic_covid

    gains = synthetic_covid(jax.random.key(0), size["state"], size["horizon"],
                            num_hospitals=size["experts"])
    return jnp.asarray(gains, jnp.result_type(float)), np.asarray(gains, np.float64)


def _prepare_meta(size: dict, ctx: Context) -> Prepared:
    from ldpjax.engine import product_grid, record
    from ldpjax.experts import EXPERTS_HINTS, meta_params, paper_learners, rw_meta_algorithm

    n, horizon, seeds, mus = size["experts"], size["horizon"], size["seeds"], size["mu"]
    gains, gains_np = _covid_inputs(size)
    learners = paper_learners()
    algorithm = rw_meta_algorithm(learners, n)
    params = product_grid(meta_params(1.0, learners), mu=list(mus))
    recorder = record.total(_gain)
    eta = np.repeat(_eta(mus, n), seeds)
    m = learners.size

    def run_ldpjax():
        out = ctx.simulate(algorithm, params, inputs=gains, num_seeds=seeds, grid_ndim=1,
                           record=recorder, hints=EXPERTS_HINTS)
        return _per_seed(out, 1)

    def run_numpy(seed):
        earned = ref.rw_meta(np.random.default_rng(seed), gains_np, eta)
        return _per_seed(earned.reshape(len(mus), seeds), 1), {}

    return Prepared(
        shape=(f"RW-Meta, {m} learners, n = {n}, T = {horizon} (synthetic {size['state']}), "
               f"{seeds} seeds x {len(mus)} mu"),
        statistic="mean total gain",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: len(mus) * seeds * horizon * (n + m) * words_per_float(),
    )


def _prepare_agarwal_singh(size: dict, ctx: Context) -> Prepared:
    from ldpjax.engine import record
    from ldpjax.experts import EXPERTS_HINTS
    from ldpjax.experts import agarwal_singh as AS

    n, horizon, seeds, mus = size["experts"], size["horizon"], size["seeds"], size["mu"]
    gains, gains_np = _covid_inputs(size)
    algorithm = AS.tree_hedge(AS.TreeHedgeConfig(n, horizon))
    params = AS.min_noise_setting(np.asarray(mus, np.float64), n, horizon)
    recorder = record.total(_gain)
    # Min Noise as the expert-advice paper sets it: node sd sqrt(n L) / mu (0 at mu = inf), Hedge
    # rate sqrt(8 log n / T)
    levels = int(horizon).bit_length()
    mus_np = np.asarray(mus, np.float64)
    finite = np.isfinite(mus_np)
    node_sd = np.where(finite, math.sqrt(n * levels) / np.where(finite, mus_np, 1.0), 0.0)
    rate = math.sqrt(8.0 * math.log(n) / horizon)

    def run_ldpjax():
        out = ctx.simulate(algorithm, params, inputs=gains, num_seeds=seeds, grid_ndim=1,
                           record=recorder, hints=EXPERTS_HINTS)
        return _per_seed(out, 1)

    def run_numpy(seed):
        earned = ref.tree_hedge(np.random.default_rng(seed), gains_np,
                                np.repeat(node_sd, seeds), np.full(len(mus) * seeds, rate))
        return _per_seed(earned.reshape(len(mus), seeds), 1), {}

    return Prepared(
        shape=(f"Agarwal & Singh Min Noise, n = {n}, T = {horizon} (synthetic {size['state']}), "
               f"{seeds} seeds x {len(mus)} mu"),
        statistic="mean total gain",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: int(finite.sum()) * seeds * horizon * n * words_per_float(),
    )


# --------------------------------------------------------------------------- demo (opt-in)
def _prepare_counter(size: dict, ctx: Context) -> Prepared:
    from ldpjax.demo.noisy_counter import counter_params, noisy_counter
    from ldpjax.engine import product_grid, record

    steps, seeds = size["horizon"], size["seeds"]
    mus = np.geomspace(0.25, 4.0, size["levels"])
    algorithm = noisy_counter()
    params = product_grid(counter_params(1.0), mu=mus)
    recorder = record.last(_error)
    # statistic: squared error scaled by the theory mu^2 / T (expectation 1 at every level)
    scale = (mus**2 / steps)[:, None]

    def run_ldpjax():
        out = ctx.simulate(algorithm, params, steps, num_seeds=seeds, grid_ndim=1, record=recorder)
        return _per_seed(np.asarray(out, np.float64) ** 2 * scale, 1)

    def run_numpy(seed):
        error = ref.noisy_counter(np.random.default_rng(seed), steps, np.repeat(mus, seeds))
        return _per_seed(error.astype(np.float64).reshape(len(mus), seeds) ** 2 * scale, 1), {}

    return Prepared(
        shape=f"noisy counter, T = {steps}, {seeds} seeds x {len(mus)} mu",
        statistic="MSE / (T / mu^2)",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: 2 * len(mus) * seeds * steps * words_per_float(),
    )


# --------------------------------------------------------------------------- registry
_MUS = (0.25, 0.5, 1.0, 2.0)
# The COVID task's mu grid is {inf, 1, 0.5, 0.25}; the bench uses finite values only, so that
# it does not depend on what an explicit mu = inf means for a family (RW-FTPL keeps a sqrt 2
# random walk, RW-Meta releases the clean gains): 4 privacy levels, same shape.
_COVID_MUS = (2.0, 1.0, 0.5, 0.25)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "quantile", "quantile", "randomized-response Local SGD (federated quantiles)",
            {
                "tiny": {"clients": 10, "budget": 200, "reps": 200, "tau": 0.3},
                "small": {"clients": 10, "budget": 2000, "reps": 500, "tau": 0.3},
                "paper": {"clients": 10, "budget": 10_000, "reps": 1000, "tau": 0.3},
            },
            _prepare_quantile,
        ),
        Workload(
            "quantile-authors-loop", "quantile",
            "the quantile cell against a per-sample Python loop, as a paper's code runs it",
            {
                "tiny": {"clients": 10, "budget": 200, "reps": 200, "tau": 0.3, "loop_reps": 40},
                "small": {"clients": 10, "budget": 2000, "reps": 500, "tau": 0.3,
                          "loop_reps": 25},
                "paper": {"clients": 10, "budget": 10_000, "reps": 1000, "tau": 0.3,
                          "loop_reps": 20},
            },
            _prepare_quantile_authors_loop,
            default=False,
        ),
        Workload(
            "bandits", "bandits", "private epsilon-greedy on the MBA RCT (Ponte & Ferecatu)",
            {
                "tiny": {"horizon": 300, "seeds": 50},
                "small": {"horizon": 2000, "seeds": 100},
                "paper": {"horizon": 10_000, "seeds": 1000},
            },
            _prepare_bandits,
        ),
        Workload(
            "rw-ftpl", "experts", "RW-FTPL (expert advice under LDP)",
            {
                "tiny": {"experts": 20, "horizon": 200, "seeds": 16, "mu": _MUS, "gap": 0.1},
                "small": {"experts": 200, "horizon": 1000, "seeds": 32, "mu": _MUS, "gap": 0.1},
                "paper": {"experts": 1000, "horizon": 2000, "seeds": 64, "mu": _MUS, "gap": 0.1},
            },
            _prepare_ftpl,
        ),
        Workload(
            "rw-adabatch", "experts", "RW-AdaBatch (expert advice under LDP)",
            {
                "tiny": {"experts": 10, "horizon": 200, "seeds": 32, "mu": (0.5, 1.0, 2.0),
                         "alpha": 0.01, "gap": 0.1},
                "small": {"experts": 10, "horizon": 2000, "seeds": 200, "mu": (0.5, 1.0, 2.0),
                          "alpha": 0.01, "gap": 0.1},
                "paper": {"experts": 10, "horizon": 10_000, "seeds": 1000,
                          "mu": (0.5, 1.0, 2.0), "alpha": 0.01, "gap": 0.1},
            },
            _prepare_adabatch,
        ),
        Workload(
            "rw-meta", "experts", "RW-Meta over the 13 paper learners (expert advice under LDP)",
            {
                "tiny": {"experts": 8, "horizon": 30, "seeds": 10, "mu": _COVID_MUS,
                         "state": "NM"},
                "small": {"experts": 24, "horizon": 148, "seeds": 25, "mu": _COVID_MUS,
                          "state": "NM"},
                "paper": {"experts": 293, "horizon": 148, "seeds": 100, "mu": _COVID_MUS,
                          "state": "CA"},
            },
            _prepare_meta,
        ),
        Workload(
            "agarwal-singh", "experts", "Agarwal & Singh tree-Hedge, Min Noise (expert advice)",
            {
                "tiny": {"experts": 8, "horizon": 30, "seeds": 20, "mu": _COVID_MUS,
                         "state": "NM"},
                "small": {"experts": 24, "horizon": 148, "seeds": 100, "mu": _COVID_MUS,
                          "state": "NM"},
                "paper": {"experts": 293, "horizon": 148, "seeds": 100, "mu": _COVID_MUS,
                          "state": "CA"},
            },
            _prepare_agarwal_singh,
        ),
        Workload(
            "noisy-counter", "demo", "the engine demo: Gaussian-noise counter",
            {
                "tiny": {"horizon": 100, "seeds": 256, "levels": 4},
                "small": {"horizon": 1000, "seeds": 2048, "levels": 4},
                "paper": {"horizon": 2000, "seeds": 4096, "levels": 4},
            },
            _prepare_counter,
            default=False,
        ),
    )
}

# the frequency oracles against multi-freq-ldpy (opt-in; the peer is the optional bench extra)
from ldpjax_experiments.bench.frequency import WORKLOADS as _FREQUENCY  # noqa: E402

WORKLOADS.update((w.name, w) for w in _FREQUENCY)
# the accountants against dp_accounting and the shuffling paper's algorithm (opt-in)
from ldpjax_experiments.bench.accounting import WORKLOADS as _ACCOUNTING  # noqa: E402

WORKLOADS.update((w.name, w) for w in _ACCOUNTING)

DEFAULT_WORKLOADS = tuple(name for name, w in WORKLOADS.items() if w.default)

__all__ = ["DEFAULT_WORKLOADS", "WORKLOADS"]
