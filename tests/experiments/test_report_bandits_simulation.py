"""Golden tests of the pure report helpers of ``bandits_simulation`` (the paired rules, the
constant strategy's peak cell, growth between horizons, number and horizon labels, lock-in,
the budget axis) on tiny arrays built by hand.

The module has no experiment of its own: the ``bandits-*`` experiments call
``run_epsilon_greedy_grid`` / ``run_gittins`` in their studies (a :class:`GridResult` of per-run
arrays) and these helpers in their reports. Their boundary cases (exactly 2 SE, one run,
``--init-visits``) are pinned in ``tests/bandits/test_verdict_rules.py``; here: several runs
(ddof 1), a chain of horizons, padded arms, segments and the tick labels. Every expected value
is worked out in a comment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from ldpjax.bandits.state import BanditState
from ldpjax_experiments import bandits_simulation as sim


def test_paired_se_uses_ddof_one_over_three_runs():
    # differences (4, 5, 6): mean 5, sd (ddof 1) = sqrt((1 + 0 + 1) / 2) = 1, se = 1 / sqrt(3)
    mean, se = sim.paired([5.0, 7.0, 9.0], [1.0, 2.0, 3.0])
    assert mean == 5.0 and se == pytest.approx(1 / math.sqrt(3))
    assert sim.significant(mean, se)  # 5 > 2 x 0.577
    assert not sim.significant(-5.0, se)  # one-sided: a drop is not a significant rise


def test_constant_peak_reads_best_rise_and_last_step():
    gammas = (0.5, 1.0, 2.0, 4.0)
    regret = [[10.0, 11.0, 12.0],  # mean 11
              [4.0, 5.0, 6.0],  # mean 5: the best gamma, 1.0
              [6.0, 8.0, 7.0],  # mean 7
              [9.0, 10.0, 14.0]]  # mean 11
    cell = sim.constant_peak(regret, gammas)
    assert cell["best"] == 1 and cell["best_gamma"] == 1.0 and cell["runs"] == 3
    assert cell["means"] == pytest.approx([11.0, 5.0, 7.0, 11.0])
    # rise R(4) - R(1) per run = (5, 5, 8): mean 6, sd sqrt((1 + 1 + 4) / 2) = sqrt(3),
    # se sqrt(3) / sqrt(3) = 1 -> 6 > 2 x 1: a peak
    assert (cell["rise"], cell["rise_se"]) == pytest.approx((6.0, 1.0))
    assert cell["cell"] == "peak"
    # last step R(4) - R(2) = (3, 2, 7): mean 4, sd sqrt((1 + 4 + 9) / 2) = sqrt(7),
    # se sqrt(7 / 3) = 1.5275
    assert cell["last_step"] == pytest.approx((4.0, math.sqrt(7 / 3)))
    # the same rise with a wide spread: (0, 0, 18) -> mean 6, sd sqrt((36 + 36 + 144) / 2)
    # = sqrt(108), se = 6 -> 6 < 2 x 6: unresolved
    wide = sim.constant_peak([*regret[:3], [4.0, 5.0, 24.0]], gammas)
    assert wide["cell"] == "unresolved" and wide["rise_se"] == pytest.approx(6.0)


def test_grows_along_a_chain_of_horizons():
    # every SE 1: the SE of a change is sqrt(2) = 1.414, 2 SE = 2.828
    # 0 -> 3: +3 > 2.828 (True); 3 -> 3.5: +0.5 (None); 3.5 -> 0: -3.5 (False)
    assert sim.grows([(0.0, 1.0), (3.0, 1.0), (3.5, 1.0), (0.0, 1.0)]) == [True, None, False]


def test_number_and_horizon_labels():
    assert sim.fmt(1_234_567.0) == "1.23e+06"  # >= 1e6: 3 significant digits, exponent
    assert sim.fmt(123.456) == "123"  # >= 100: no decimals
    assert sim.fmt(0.012345) == "0.0123"
    assert sim.fmt(math.inf) == "inf"
    assert [sim.horizon_text(h) for h in (10, 10_000, 1e8, 2_000, 0.5)] == [
        "1e1", "1e4", "1e8", "2000", "0.5"]
    assert sim.init_text(None).endswith("K uniform-play visits (K = number of arms)")
    assert "xi_t = gamma" in sim.init_text(0)
    assert sim.init_text(5) == "both strategies start with 5 uniform-play visits"


def test_locked_in_masks_padded_arms_and_reads_segment_zero():
    # 2 configs x 1 run x 2 segments x K_max = 3 arms; config 0 has 2 arms (arm 2 is padding)
    shows = np.full((2, 1, 2, 3), 10)
    clicks = np.array([[[[2, 5, 9], [9, 0, 0]]],  # config 0: segment 0 Q = (0.2, 0.5, [0.9])
                       [[[2, 5, 1], [0, 0, 9]]]])  # config 1: segment 0 Q = (0.2, 0.5, 0.1)
    state = BanditState(shows, clicks, np.zeros((2, 1, 2)), np.zeros((2, 1)))
    ctr = np.array([[[0.2, 0.5, 0.9], [0.9, 0.1, 0.1]],
                    [[0.2, 0.5, 0.9], [0.1, 0.1, 0.9]]])
    locked = sim.locked_in(state, ctr, np.array([2, 3]))
    # config 0: best valid arm 1 (0.5), greedy among valid arms is arm 1 (0.5): not locked;
    # the padded arm's 0.9 and segment 1's Q = (0.9, 0, 0) are not read.
    # config 1: best arm 2 (0.9), greedy arm 1 (0.5 > 0.1): locked in
    assert locked.tolist() == [[0.0], [1.0]]


def _axis(ticks):
    ax = Figure().subplots()
    sim.gamma_axis(ax, ticks)
    major = list(ax.xaxis.get_major_locator().tick_values(0, 1))
    minor = list(ax.xaxis.get_minor_locator().tick_values(0, 1))
    labels = [ax.xaxis.get_major_formatter()(x, 0) for x in major]
    return major, minor, labels


def test_gamma_axis_labels_ticks_at_least_0_3_decades_apart():
    # 0.5; 0.6 (log10 1.2 = 0.08 < 0.3: unlabelled); 1 (log10 2 = 0.301); 3 (0.477);
    # 5 (log10(5/3) = 0.22: unlabelled); 10 (log10(10/3) = 0.52)
    major, minor, labels = _axis([10.0, 0.5, 0.6, 1.0, 3.0, 5.0, 0.0])  # 0 dropped (log axis)
    assert major == [0.5, 1.0, 3.0, 10.0] and minor == [0.6, 5.0]
    assert labels == ["0.5", "1", "3", "10"]
    # the last tick wins over a close labelled neighbour: 1, 3, 4 (log10(4/3) = 0.12) -> 1, 4
    major, minor, _ = _axis([1.0, 3.0, 4.0])
    assert major == [1.0, 4.0] and minor == [3.0]
