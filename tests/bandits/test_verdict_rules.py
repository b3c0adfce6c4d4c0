"""The bandits experiments' verdict rules, pinned with hand-made numbers (no simulation), and
the uniform-play start that both budget strategies share (``init_visits`` / ``init_constant``).

Rule boundaries: a paired difference is significant only when it exceeds 2 SE strictly; a
difference of exactly 2 SE is not (the numbers below are exact in binary floating point).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.state import BanditState
from ldpjax.engine import make_key, record, simulate
from ldpjax_experiments import bandits_mba as mba
from ldpjax_experiments import bandits_simulation as sim
from ldpjax_experiments import bandits_zozo as zozo
from ldpjax_experiments.base import OptionValueError
from tests.bandits.spend_loop import spend_per_step

E4, E5, E6 = 10_000, 100_000, 1_000_000


# ----------------------------------------------------------------------------- paired rules
def test_paired_difference_and_its_se():
    mean, se = sim.paired([5.0, 3.0], [2.0, 2.0])  # differences 3, 1
    assert mean == 2.0 and se == 1.0  # sd(3, 1) / sqrt(2) = 1 exactly
    assert sim.paired([4.0], [1.0]) == (3.0, 0.0)  # one run: no SE


def test_significance_is_strictly_above_two_se():
    assert not sim.significant(2.0, 1.0)  # exactly 2 SE
    assert sim.significant(2.0 + 1e-12, 1.0)
    assert not sim.significant(0.0, 0.0)  # identical runs (common random numbers)
    assert sim.significant(1e-9, 0.0)


def test_constant_peak_cells():
    gammas = (0.5, 3.0, 5.0)
    best = [0.0, 0.0]
    # rise R(top) - R(best) per run = (3, 1): mean 2 = exactly 2 SE -> unresolved
    cell = sim.constant_peak([[10.0, 10.0], best, [3.0, 1.0]], gammas)
    assert cell["cell"] == "unresolved" and cell["best_gamma"] == 3.0
    assert (cell["rise"], cell["rise_se"]) == (2.0, 1.0)
    # rise (4, 2): mean 3 = 3 SE -> peak
    assert sim.constant_peak([[10.0, 10.0], best, [4.0, 2.0]], gammas)["cell"] == "peak"
    # still falling at the top of the grid -> edge; the last step is negative
    edge = sim.constant_peak([[10.0, 12.0], [5.0, 6.0], [1.0, 2.0]], gammas)
    assert edge["cell"] == "edge" and edge["rise"] == 0.0 and edge["last_step"][0] == -4.0


def test_grows_between_independent_horizons():
    # SE of the change = hypot(3, 4) = 5 exactly, so 2 SE = 10
    assert sim.grows([(0.0, 3.0), (10.0, 4.0)]) == [None]  # exactly 2 SE
    assert sim.grows([(0.0, 3.0), (10.5, 4.0)]) == [True]
    assert sim.grows([(10.5, 3.0), (0.0, 4.0)]) == [False]


# ----------------------------------------------------------------------------- MBA verdicts
def _peak(cell, best_gamma, rise=0.0, se=0.0, runs=50, means=(100.0, 40.0, 90.0)):
    best = list(means).index(min(means))
    return {"cell": cell, "best": best, "best_gamma": best_gamma, "rise": rise,
            "rise_se": se, "runs": runs, "means": list(means), "last_step": (0.0, 0.0)}


def test_mba_peak_verdict_statuses_and_reasons():
    gammas = (1.0, 3.0, 5.0)
    peak = _peak("peak", 3.0, 47.0, 6.5, 400, (87.0, 43.6, 90.6))
    unresolved = _peak("unresolved", 3.0, 20.0, 10.0, 50, (786.0, 182.0, 204.0))
    edge = _peak("edge", 5.0, means=(8000.0, 1411.0, 442.0))
    v = mba.peak_verdict({E4: peak}, gammas)
    assert v.status == "reproduced" and v.reason == ""
    v = mba.peak_verdict({E4: peak, E5: unresolved, E6: edge}, gammas,
                         {E6: {6.0: 541.0, 7.0: 1209.0}})
    assert v.status == "partly" and v.ours == pytest.approx(1 / 3)
    assert "At T=1e5 the rise from gamma=3 (182) to 5 (204) is 20, within 2 paired SE (20)" \
        in v.reason
    assert "at T=1e6 the regret still falls at the grid's top gamma=5 (442" in v.reason
    assert "rises beyond it (diagnostic: 541 at 6, 1209 at 7)" in v.reason
    # the best gamma inside the grid everywhere, but unresolved: the direction holds -> partly
    assert mba.peak_verdict({E5: unresolved}, gammas).status == "partly"
    v = mba.peak_verdict({E6: edge}, gammas, {E6: {6.0: 300.0}})
    assert v.status == "not" and "keeps falling beyond it" in v.reason


def test_mba_advantage_verdict_is_absolute_and_paired():
    # the numbers: 49.7 -> 174.9 -> -269 (R_const - R_dyn at gamma = 5)
    adv = {E4: (49.7, 6.0), E5: (174.9, 30.0), E6: (-269.0, 60.0)}
    v = mba.advantage_verdict(adv, 5.0, 2)
    assert v.status == "partly" and v.ours == 0.5
    assert "falls from 175 at T=1e5 to -269 at T=1e6" in v.reason
    assert "fixed eps = 0.0134" in v.reason and "(eps = 0.0302)" in v.reason
    assert mba.advantage_verdict({E4: (1.0, 0.1), E5: (2.0, 0.1)}, 5.0, 2).status == "reproduced"
    # a step of exactly 2 SE (hypot(3, 4) = 5) is unresolved; the point estimate rises -> partly
    v = mba.advantage_verdict({E4: (0.0, 3.0), E5: (10.0, 4.0)}, 5.0, 2)
    assert v.status == "partly" and "within 2 SE (10)" in v.reason
    assert mba.advantage_verdict({E4: (10.0, 3.0), E5: (0.0, 4.0)}, 5.0, 2).status == "not"


def test_mba_approach_verdict():
    assert mba.approach_verdict({E4: (0.0, 0.0), E5: (0.0, 0.0)}, 5.0).status == "reproduced"
    assert mba.approach_verdict({E4: (5.0, 2.5)}, 5.0).status == "reproduced"  # exactly 2 SE
    v = mba.approach_verdict({E4: (5.0, 2.5), E5: (5.1, 2.5)}, 5.0)
    assert v.status == "partly" and v.reason.startswith("At T=1e5 dynamic")


# ----------------------------------------------------------------------------- ZOZO verdicts
def _cells(drops, horizon=E5):
    return {(k, horizon): (_peak("edge", 5.0) if d is None else
                          _peak("peak" if sim.significant(d[0], d[1]) else "unresolved", 3.0,
                                d[0], d[1]))
            for k, d in drops.items()}


def test_zozo_peak_is_judged_at_the_smallest_k():
    cells = {**_cells({2: (30.0, 5.0), 8: None}), **_cells({2: (40.0, 5.0), 8: None}, E6)}
    v = zozo.peak_at_small_k_verdict(cells, 2, (E5, E6), (0.5, 3.0, 5.0))
    assert v.status == "reproduced"  # K = 8 has no peak: not judged here
    cells[(2, E6)] = _peak("unresolved", 3.0, 10.0, 5.0)  # exactly 2 SE
    v = zozo.peak_at_small_k_verdict(cells, 2, (E5, E6), (0.5, 3.0, 5.0))
    assert v.status == "partly" and "At T=1e6 the drop from gamma=3 to 5 is 10 clicks" in v.reason


def test_zozo_drop_shrinks_with_k():
    ks = (2, 4, 8)
    shrink = _cells({2: (40.0, 3.0), 4: (20.0, 4.0), 8: None})  # 40 -> 0: 40 > 2 x 3
    assert zozo.drop_shrinks_verdict(shrink, ks, (E5,)).status == "reproduced"
    # 10 -> 0 with SE hypot(5, 0) = 5: exactly 2 SE, point estimates shrink -> partly
    flat = _cells({2: (10.0, 5.0), 4: (5.0, 5.0), 8: None})
    v = zozo.drop_shrinks_verdict(flat, ks, (E5,))
    assert v.status == "partly" and "within 2 SE (10)" in v.reason
    rises = _cells({2: (5.0, 1.0), 4: (40.0, 2.0), 8: (1.0, 1.0)})
    v = zozo.drop_shrinks_verdict(rises, ks, (E5,))
    assert v.status == "not" and "rises with K" in v.reason
    none = _cells({2: None, 4: None, 8: None})
    assert "no drop at K=2" in zozo.drop_shrinks_verdict(none, ks, (E5,)).reason


# ----------------------------------------------------------------------------- lock-in
def test_locked_in_reads_the_final_greedy_arm():
    shows = np.array([[[[10, 10]], [[10, 10]], [[10, 10]], [[0, 10]]]])  # (1 config, 4 runs)
    clicks = np.array([[[[5, 1]], [[1, 4]], [[2, 2]], [[0, 1]]]])
    state = BanditState(shows, clicks, np.zeros((1, 4, 1)), np.zeros((1, 4)))
    ctr = np.array([[[0.3, 0.2]]])
    locked = sim.locked_in(state, ctr, np.array([2]))
    # best arm ahead; behind; tied (not locked); never shown (Q = 0) and behind
    assert locked.tolist() == [[0.0, 1.0, 0.0, 1.0]]


# ----------------------------------------------------------------------------- init option
def test_init_visits_option():
    assert sim.parse_init_visits("K") is None and sim.parse_init_visits("k") is None
    assert sim.parse_init_visits("0") == 0 and sim.parse_init_visits(3) == 3
    with pytest.raises(OptionValueError):
        sim.parse_init_visits("-1")
    with pytest.raises(OptionValueError):
        sim.parse_init_visits("two")
    assert sim.init_config(None) == (None, True)
    assert sim.init_config(0) == (1, False)
    assert sim.init_config(4) == (4, True)


def test_constant_strategy_uniform_start_is_opt_in():
    # jitted once per init_constant (all arguments traced): eagerly every call dispatches the
    # formula op by op; the traced NaN below reuses the init_constant=True compilation
    exploration = jax.jit(budgets_lib.exploration, static_argnames=("init_constant",))
    mask = jnp.ones(2, bool)
    eps_gamma = 2 / (2 + math.exp(5.0) - 1)
    for clock, start in ((1, True), (2, True), (3, False)):
        eps, _, xi = exploration(0, 5.0, jnp.zeros(2), clock, 2, mask, 2, init_constant=True)
        assert float(eps) == pytest.approx(1.0 if start else eps_gamma)
        assert float(xi) == (0.0 if start else 5.0)
        eps, _, xi = exploration(0, 5.0, jnp.zeros(2), clock, 2, mask, 2)
        assert float(eps) == pytest.approx(eps_gamma) and float(xi) == 5.0  # default: none
    # a traced invalid gamma still fails closed inside the start (uniform play, spend NaN)
    eps, _, xi = exploration(0, jnp.nan, jnp.zeros(2), 1, 2, mask, 2, init_constant=True)
    assert float(eps) == 1.0 and math.isnan(float(xi))
    with pytest.raises(TypeError, match="init_constant"):
        bandits.PolicyConfig(init_constant="yes")


def _uniform_start_case(block, init_constant):
    env = bandits.make_environment([0.324, 0.295])
    params = bandits.epsilon_greedy_params(env, "constant", 5.0)
    if block:  # growth 0.5: blocks of 1 visitor while t < 4
        alg = bandits.batched_epsilon_greedy(bandits.BlockConfig(
            growth=0.5, init_steps=2, init_constant=init_constant))
        p = bandits.BlockParams(params, jnp.asarray(3, jnp.int32), jnp.asarray(0, jnp.int32))
    else:
        alg = bandits.epsilon_greedy(bandits.PolicyConfig(init_steps=2,
                                                          init_constant=init_constant))
        p = params
    # 3 steps, the first 2 the uniform start: with init_constant it spends only at step 3
    return alg, p, (5.0 * 1 if init_constant else 5.0 * 3)


# Fast: the policies' own init/step, scanned over 3 steps and vmapped over 2 seeds under one
# jit with the params traced, recording only the spend (tests/bandits/spend_loop.py). The
# spend does not depend on the clicks, so XLA drops the block policy's binomial click draws,
# the costly part of its compilation; through ``simulate`` (below, slow), which returns the
# whole state (clicks included), the same check compiles them.
@pytest.mark.parametrize("block", [False, True])
@pytest.mark.parametrize("init_constant", [True, False])
def test_uniform_start_spends_nothing_in_both_policies(block, init_constant):
    alg, p, expected = _uniform_start_case(block, init_constant)
    per_step = np.asarray(spend_per_step(alg, p, jax.random.split(make_key(0), 2), 3))
    start = [0.0, 0.0] if init_constant else [5.0, 5.0]
    assert np.allclose(per_step, [start + [5.0]] * 2)
    assert np.allclose(per_step.sum(axis=1), expected)


@pytest.mark.slow
@pytest.mark.parametrize("block", [False, True])
@pytest.mark.parametrize("init_constant", [True, False])
def test_uniform_start_spends_nothing_through_simulate(block, init_constant):
    alg, p, expected = _uniform_start_case(block, init_constant)
    out = simulate(alg, p, make_key(0), 3, num_seeds=2, record=record.total(lambda o: o.spend))
    assert np.allclose(np.asarray(out.record), expected)
