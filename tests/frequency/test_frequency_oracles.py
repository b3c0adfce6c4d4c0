"""The ``frequency-oracles`` experiment (Wang et al. 2017's variance comparison)."""

from __future__ import annotations

import dataclasses

import pytest

from ldpjax_experiments import frequency_oracles as fo
from ldpjax_experiments import get_experiment, run_experiment
from tests.experiments.test_figures import _check_figure, strict_problems
from tests.frequency.test_online import _expected


@pytest.mark.parametrize("oracle", fo.DEFAULT_ORACLES)
def test_closed_form_is_wang_et_al_per_item(oracle):
    for eps, d in ((0.5, 2), (3.0, 1024)):
        assert fo.closed_form(oracle, eps, d, 700) == pytest.approx(
            _expected(oracle, eps, d, 700) / d, rel=1e-5
        )


def _tiny(tmp_path, oracles):
    overrides = dict(eps=(1.0, 4.0), domains=(2, 64), users=300, oracles=oracles)
    result, _ = run_experiment(
        get_experiment("frequency-oracles"),
        seeds=40,
        out_dir=tmp_path / "fo",
        overrides=overrides,
        show_progress=False,
        quiet=True,
    )
    rows = result.tables["variance"]
    assert len(rows) == len(oracles) * 2 * 2
    assert {"oracle", "d", "eps", "variance", "se", "se_band", "closed_form", "ratio"} <= set(
        rows[0]
    )
    return result


@pytest.mark.slow
def test_tiny_run_of_two_oracles(tmp_path):
    """About 10 s on 2 cores (the fast representatives are the closed-form and verdict tests): GRR and OUE only (the ordering claims need four oracles)."""
    result = _tiny(tmp_path, ("grr", "oue"))
    verdicts = result.typed_verdicts()
    assert len(verdicts) == 2 and all(v.status == "reproduced" for v in verdicts)
    assert not _check_figure("frequency-oracles", "variance", result.figures["variance"])


@pytest.mark.slow
def test_tiny_run_reproduces_and_draws_an_honest_figure(tmp_path):
    result = _tiny(tmp_path, fo.DEFAULT_ORACLES)
    verdicts = result.typed_verdicts()
    assert len(verdicts) == len(fo.DEFAULT_ORACLES) + 2
    assert all(v.status == "reproduced" for v in verdicts), [v.line() for v in verdicts]
    assert (tmp_path / "fo" / "variance.csv").is_file()
    assert (tmp_path / "fo" / "variance.png").is_file()
    fig = result.figures["variance"]
    problems = _check_figure("frequency-oracles", "variance", fig) + strict_problems(
        "frequency-oracles/variance", fig
    )
    assert not problems, problems


def _row(oracle, d, eps, variance, closed=None, se=0.01):
    closed = variance if closed is None else closed
    return {
        "oracle": oracle,
        "d": d,
        "eps": eps,
        "variance": variance,
        "se": se,
        "se_band": se,
        "closed_form": closed,
        "ratio": variance / closed,
        "z": (variance - closed) / se,
    }


def test_verdicts_fail_on_a_wrong_variance_or_ordering():
    good = [
        _row("grr", 1024, 1.0, 3.0),
        _row("sue", 1024, 1.0, 1.5),
        _row("oue", 1024, 1.0, 1.0),
        _row("olh", 1024, 1.0, 1.0),
    ]
    assert all(v.status == "reproduced" for v in fo._verdicts(good))
    wrong = [
        dataclasses.replace(v)
        for v in fo._verdicts([_row("grr", 1024, 1.0, 3.0, closed=2.0)] + good[1:])
    ]
    assert wrong[0].status == "not"  # GRR's empirical variance 1.5x its closed form
    swapped = [
        _row("grr", 1024, 1.0, 0.5),
        _row("sue", 1024, 1.0, 1.5),
        _row("oue", 1024, 1.0, 1.0),
        _row("olh", 1024, 1.0, 1.0),
    ]
    statuses = {v.claim.split(" ")[0]: v.status for v in fo._verdicts(swapped)}
    assert statuses["OLH"] == "not" and statuses["GRR"] == "not"  # GRR wins above 3e^eps + 2
