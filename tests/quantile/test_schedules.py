"""Communication schedules (fixed budget) and the learning-rate formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ldpjax.quantile as Q
from ldpjax.quantile import schedules


@pytest.mark.parametrize("budget", [1, 7, 100, 1234])
def test_schedules_use_the_budget_exactly(budget):
    for schedule in (Q.C1, Q.LOG, Q.constant(3)) if budget >= 3 else (Q.C1, Q.LOG):
        rounds = schedule.local_steps_per_round(budget)
        assert rounds.sum() == budget
        assert np.all(rounds >= 1)
    assert np.all(Q.C1.local_steps_per_round(budget) == 1)


def test_c5_truncates_the_last_round():
    np.testing.assert_array_equal(Q.C5.local_steps_per_round(12), [5, 5, 2])
    np.testing.assert_array_equal(Q.C5.local_steps_per_round(10), [5, 5])


def test_log_schedule_is_ceil_log2_m_plus_1():
    rounds = Q.LOG.local_steps_per_round(10_000)
    expected = [math.ceil(math.log2(m + 1)) for m in range(1, rounds.size + 1)]
    np.testing.assert_array_equal(rounds[:-1], expected[:-1])
    assert 1 <= rounds[-1] <= expected[-1]
    np.testing.assert_array_equal(rounds[:8], [1, 2, 2, 3, 3, 3, 3, 4])


def test_custom_schedule_truncates_and_rejects_short_sequences():
    sched = Q.custom([1, 1, 4, 10], name="mine")
    np.testing.assert_array_equal(sched.local_steps_per_round(8), [1, 1, 4, 2])
    with pytest.raises(ValueError, match=r"budget \(t_T, samples per client\) = 20 exceeds"):
        sched.local_steps_per_round(20)
    with pytest.raises(ValueError, match="local_steps"):
        Q.custom([1, 0, 2])
    with pytest.raises(ValueError, match="local_steps"):
        Q.custom([])


def test_budget_smaller_than_one_round_is_rejected():
    with pytest.raises(ValueError, match=r"budget \(t_T, samples per client\) must be >= 5"):
        Q.C5.local_steps_per_round(3)
    with pytest.raises(ValueError, match=r"budget \(t_T, samples per client\) must be >= 1"):
        Q.C1.local_steps_per_round(0)
    with pytest.raises(ValueError, match=r"budget \(t_T, samples per client\) must be >= 5"):
        Q.LocalSGDConfig(4, Q.C5)
    with pytest.raises(ValueError, match=r"budget \(t_T, samples per client\) must be an integer"):
        Q.LocalSGDConfig(10.5, Q.C1)


def test_by_name_and_config_helpers():
    assert schedules.by_name("C1") == Q.C1
    assert schedules.by_name("c5") == Q.C5
    assert schedules.by_name("log") == Q.LOG
    with pytest.raises(ValueError, match="schedule must be"):
        schedules.by_name("fast")
    config = Q.LocalSGDConfig(12, Q.C5)
    assert config.num_rounds == 3
    assert config.rounds_for_samples([5, 6, 12]) == [1, 2, 3]


def test_learning_rate_formula():
    lr = Q.learning_rate(np.array([1, 100, 10_000]), 20.0, 0.51, 100.0)
    expected = [20.0 / (m**0.51 + 100.0) for m in (1, 100, 10_000)]
    np.testing.assert_allclose(lr, expected, rtol=1e-6)
    assert Q.DEFAULT_LR == Q.LearningRate(20.0, 0.51, 100.0)
    with pytest.raises(ValueError, match="lr_power"):
        schedules.check_learning_rate(1.0, 0.5, 0.0)
    with pytest.raises(ValueError, match="lr_scale"):
        schedules.check_learning_rate(0.0, 0.6, 0.0)
