"""Firm-level budget allocation (eqs. 19-21): water-filling vs optax, feasibility, monotonicity."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.engine import make_key

GAMMAS = [0.0, 0.1, 1.0, 5.0, 20.0, 60.0, 1000.0]


@pytest.fixture(scope="module")
def experiments():
    data = bandits.synthetic_asos(make_key(3), num_experiments=12)
    return data.num_arms.astype(float), data.visitors


# Every water-filling solve on the module's 12-experiment shape goes through ONE compiled
# program: allocate_budget and its reverse-mode gradient in Gamma (jax.grad), vmapped over rows
# that each carry their own (K, T, Gamma). A separate compile of the solver (~10 s), of its
# gradient (~10 s) and ~20 sequential solves cost about twice as much.
def _with_grad(K, T, g):
    def total(b):
        alloc = bandits.allocate_budget(K, T, b)
        return alloc.total_bound, alloc
    (_, alloc), grad = jax.value_and_grad(total, has_aux=True)(g)
    return alloc, grad


_solve_rows = jax.jit(jax.vmap(_with_grad))

# the monotonicity grid: GAMMAS and these, sorted (13 budgets, 0 to 1000)
MONOTONE_EXTRA = [0.01, 0.3, 2.0, 10.0, 40.0, 200.0]
FD_STEP = 0.05  # central difference at GRAD_AT +- FD_STEP
GRAD_AT = 5.0
# brute-force instance: two experiments padded with ten T = 1 experiments to the module shape
BRUTE_K, BRUTE_T = np.array([2.0, 4.0]), np.array([3e5, 4e7])
BRUTE_PAD = 10
BRUTE_GAMMAS = [0.5, 2.0, 6.0, 9.0]


@pytest.fixture(scope="module")
def waterfill(experiments):
    """{"own": {Gamma: (Allocation, d total / d Gamma)} on the module's experiments,
    "brute": {Gamma: Allocation} on the padded brute-force instance}, from one solve."""
    K, T = experiments
    own = GAMMAS + MONOTONE_EXTRA + [GRAD_AT - FD_STEP, GRAD_AT + FD_STEP]
    K_pad = np.r_[BRUTE_K, np.full(BRUTE_PAD, 2.0)]
    T_pad = np.r_[BRUTE_T, np.ones(BRUTE_PAD)]
    rows = [(K, T, g) for g in own] + [(K_pad, T_pad, g) for g in BRUTE_GAMMAS]
    dtype = jax.numpy.result_type(float)
    Ks, Ts, Gs = (np.asarray([r[i] for r in rows], dtype) for i in range(3))
    alloc, grad = _solve_rows(Ks, Ts, Gs)
    alloc = jax.tree_util.tree_map(np.asarray, alloc)
    grad = np.asarray(grad)
    row = lambda i: jax.tree_util.tree_map(lambda x: x[i], alloc)  # noqa: E731
    return {"own": {g: (row(i), float(grad[i])) for i, g in enumerate(own)},
            "brute": {g: row(len(own) + i) for i, g in enumerate(BRUTE_GAMMAS)}}


@pytest.fixture(scope="module")
def solutions(experiments, waterfill):
    K, T = experiments
    wf = [waterfill["own"][g][0] for g in GAMMAS]
    ox = [bandits.allocate_budget(K, T, g, method="optax") for g in GAMMAS]
    return wf, ox


def test_optax_agrees_with_waterfilling(solutions):
    for g, w, o in zip(GAMMAS, *solutions, strict=True):
        w_total, o_total = float(w.total_bound), float(o.total_bound)
        # the two solvers agree to 0.1%; water-filling (a global Lagrangian method) is never
        # beaten by more than 0.02% by optax (a local method) -- neither is guaranteed
        # globally optimal where the bounds are not convex (see the portfolio module doc)
        assert w_total <= o_total * (1 + 2e-4), g
        assert abs(o_total / w_total - 1) <= 1e-3, g
        assert np.array_equal(np.asarray(w.strategy), np.asarray(o.strategy)) or g == 0.0
        # on this instance the two also find the same allocation (the convex-instance test
        # below, slow, checks it where the optimum is provably unique)
        assert np.allclose(np.asarray(w.gamma), np.asarray(o.gamma), atol=5e-2), g  # max 0.03


@pytest.mark.slow  # two more solver compilations (~7 s): a static strategies tuple and shape


def test_optax_equals_waterfilling_allocation_on_a_convex_instance():
    # K = 2, constant strategy: R is convex on [0, gamma*], so the optimum is unique
    K = np.full(6, 2.0)
    T = np.array([1e4, 5e4, 2e5, 1e6, 5e6, 2e7])
    for g in (0.5, 3.0, 10.0):
        w = bandits.allocate_budget(K, T, g, strategies=("constant",))
        o = bandits.allocate_budget(K, T, g, strategies=("constant",), method="optax")
        assert np.allclose(np.asarray(w.gamma), np.asarray(o.gamma), atol=2e-2)
        assert float(o.total_bound) == pytest.approx(float(w.total_bound), rel=1e-4)


def test_never_exceeds_gamma_and_respects_caps(experiments, solutions):
    K, T = experiments
    caps = {0: np.asarray(bandits.gamma_star_constant(K, T)),
            2: np.asarray(bandits.gamma_star_dynamic(K, T))}
    total_cap = float(bandits.unconstrained_allocation(K, T).spent)
    for g, w, o in zip(GAMMAS, *solutions, strict=True):
        for a in (w, o):
            gamma = np.asarray(a.gamma)
            assert gamma.sum() <= g * (1 + 1e-5) + 1e-7
            assert np.all(gamma >= 0)
            codes = np.asarray(a.strategy)
            cap = np.where(codes == 0, caps[0], caps[2])
            assert np.all(gamma <= cap * (1 + 1e-5))
        if g < total_cap:  # a binding budget is used up
            assert float(w.spent) == pytest.approx(g, rel=1e-4, abs=1e-6)


def test_more_budget_never_raises_the_summed_bound(waterfill):
    grid = sorted(GAMMAS + MONOTONE_EXTRA)  # 13 budgets from 0 to 1000
    totals = np.array([float(waterfill["own"][g][0].total_bound) for g in grid])
    assert np.all(np.diff(totals) <= 1e-6 * totals[:-1])
    assert totals[-1] < totals[0]


def test_zero_and_ample_budgets(experiments, solutions):
    K, T = experiments
    w0 = solutions[0][0]
    assert np.all(np.asarray(w0.gamma) == 0)
    zero_bound = np.minimum(np.asarray(bandits.regret_bound_constant(0.0, K, T)),
                            np.asarray(bandits.regret_bound_dynamic(0.0, K, T)))
    assert float(w0.total_bound) == pytest.approx(zero_bound.sum(), rel=1e-5)
    ample = solutions[0][-1]
    free = bandits.unconstrained_allocation(K, T)
    assert np.allclose(np.asarray(ample.gamma), np.asarray(free.gamma), rtol=1e-5)
    assert float(ample.price) == 0.0


@pytest.mark.parametrize("padded", [
    # fast: the two experiments padded with ten T = 1 experiments to the module's 12-experiment
    # shape, solved in the module's one water-filling sweep (a new shape compiles ~10 s). A
    # T = 1 experiment's best choice is "dynamic" with no budget (bound 5e-10 at gamma = 0, cap
    # 0; "constant" is >= 0.5 there), so the padded optimum is the two-experiment optimum plus
    # ten times that bound, and any budget given to the padding would show as a worse total.
    True,
    pytest.param(False, marks=pytest.mark.slow),  # the bare two-experiment problem
])
def test_waterfilling_is_optimal_against_brute_force(padded, request):
    # two experiments, both strategies: exhaustive search over the split of the budget
    K, T = BRUTE_K, BRUTE_T
    pad = BRUTE_PAD if padded else 0
    pad_bound = pad * min(float(bandits.regret_bound_constant(0.0, 2.0, 1.0)),
                          float(bandits.regret_bound_dynamic(0.0, 2.0, 1.0)))
    for g in BRUTE_GAMMAS:
        if padded:
            w = request.getfixturevalue("waterfill")["brute"][g]
        else:
            w = bandits.allocate_budget(K, T, g)
        if padded:
            assert np.all(np.asarray(w.gamma)[2:] == 0.0)
        best = np.inf
        split = np.linspace(0, g, 4001)
        for s0, s1 in itertools.product(("constant", "dynamic"), repeat=2):
            caps = [float((bandits.gamma_star_constant if s == "constant"
                           else bandits.gamma_star_dynamic)(k, t))
                    for s, k, t in zip((s0, s1), K, T, strict=True)]
            g0 = np.minimum(split, caps[0])
            g1 = np.minimum(g - split, caps[1])
            fn = {"constant": bandits.regret_bound_constant, "dynamic": bandits.regret_bound_dynamic}
            total = np.asarray(fn[s0](g0, K[0], T[0])) + np.asarray(fn[s1](g1, K[1], T[1]))
            best = min(best, pad_bound + float(total.min()))
        assert float(w.total_bound) <= best * (1 + 1e-5)


def test_budget_gradient_is_minus_the_price(waterfill):
    # jax.grad of the summed bound in Gamma (in the module's sweep, under vmap)
    alloc, grad = waterfill["own"][GRAD_AT]
    price = float(alloc.price)
    total = lambda b: float(waterfill["own"][b][0].total_bound)  # noqa: E731
    fd = (total(GRAD_AT + FD_STEP) - total(GRAD_AT - FD_STEP)) / (2 * FD_STEP)
    assert grad == pytest.approx(-price, rel=2e-2)
    assert grad == pytest.approx(fd, rel=2e-2)


def test_equal_split(experiments, solutions):
    K, T = experiments
    e = bandits.equal_split(K, T, 60.0)
    assert np.allclose(np.asarray(e.gamma), 5.0)
    assert np.all(np.asarray(e.strategy) == bandits.STRATEGIES["capped"])
    assert bandits.strategy_names(e.strategy)[0] == "dynamic"
    w = solutions[0][GAMMAS.index(60.0)]
    assert float(w.total_bound) <= float(e.total_bound)


def test_allocation_strategy_names_round_trip(solutions):
    """allocate_budget -> strategy_names -> epsilon_greedy_params selects the allocated code
    (issue 9: "dynamic" used to select the uncapped code 1, which overspent 2.35x)."""
    env = bandits.make_environment([0.3, 0.2])
    seen = set()
    for alloc in solutions[0]:
        codes = np.asarray(alloc.strategy)
        for code, name, gamma in zip(codes, bandits.strategy_names(codes),
                                     np.asarray(alloc.gamma), strict=True):
            params = bandits.epsilon_greedy_params(env, name, float(gamma))
            assert int(params.strategy) == int(code) != bandits.STRATEGIES["uncapped"]
            seen.add(int(code))
    assert bandits.STRATEGIES["dynamic"] in seen  # the code whose name used to mislead


@pytest.mark.slow
def test_vmap_over_budgets(experiments):
    K, T = experiments
    batched = jax.vmap(lambda b: bandits.allocate_budget(K, T, b).total_bound)(
        np.array([1.0, 5.0]))
    assert float(batched[1]) == pytest.approx(float(bandits.allocate_budget(K, T, 5.0).total_bound),
                                              rel=1e-5)


@pytest.mark.parametrize("call, name", [
    (lambda: bandits.allocate_budget([2, 3], [1e4, 1e5], -1.0), "Gamma"),
    (lambda: bandits.allocate_budget([2, 1], [1e4, 1e5], 1.0), "K"),
    (lambda: bandits.allocate_budget([2, 3], [1e4, 0.0], 1.0), "T"),
    (lambda: bandits.allocate_budget([2, 3], [1e4], 1.0), "K and T"),
    (lambda: bandits.allocate_budget([2, 3], [1e4, 1e5], 1.0, strategies=("greedy",)),
     "strategies"),
    (lambda: bandits.allocate_budget([2, 3], [1e4, 1e5], 1.0, method="lp"), "method"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
