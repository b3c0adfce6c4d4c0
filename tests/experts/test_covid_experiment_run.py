"""``experts-covid``: bad options are rejected before anything runs.

The end-to-end run on the real 5-week extract (``test_experts_covid_on_the_real_extract``) is
in ``test_covid_experiment.py``: in the same module as the tiny run's real-data panel (same
n = 10 hospitals, T = 5 weeks) it reuses that module's compiled kernels (the test session drops
compiled kernels after every module)."""

from __future__ import annotations

import pytest

from ldpjax_experiments.base import get_experiment
from ldpjax_experiments.runner import run_experiment


def test_experts_covid_rejects_bad_options(tmp_path):
    experiment = get_experiment("experts-covid")
    with pytest.raises(ValueError, match="sensitivity"):
        run_experiment(
            experiment,
            seeds=1,
            out_dir=tmp_path,
            overrides={"ldp_sensitivity": "huge", "states": ("NM",), "weeks": 5},
            show_progress=False,
            quiet=True,
        )
    with pytest.raises(ValueError, match="states"):
        run_experiment(
            experiment,
            seeds=1,
            out_dir=tmp_path,
            overrides={"states": ("TX",)},
            show_progress=False,
            quiet=True,
        )
    with pytest.raises(ValueError, match="mu"):
        run_experiment(
            experiment,
            seeds=1,
            out_dir=tmp_path,
            overrides={"mu": (0.0,), "states": ("NM",)},
            show_progress=False,
            quiet=True,
        )
