"""Typed records of the harness: verdicts end to end, the progress callback, the runtime's home."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest

from ldpjax.demo import CounterParams, noisy_counter
from ldpjax.engine import make_key, simulate
from ldpjax_experiments import Experiment, ExperimentResult, run_experiment
from ldpjax_experiments.verdicts import Verdict, judge, judge_condition, verdict_table


def test_a_closed_form_reference_is_labelled_and_the_paper_keyword_still_works():
    v = judge("e", "rmse", 1.01, paper=1.0, tolerance=0.05, reference="closed form")
    assert "closed form 1" in v.line() and "paper" not in v.line()
    assert v.as_dict()["reference"] == "closed form"
    plain = judge("e", "rmse", 1.01, 1.0, 0.05)
    assert "paper 1" in plain.line() and "reference" not in plain.as_dict()
    assert judge_condition("e", "c", True, paper=2.0, reference="theorem 1").reference == "theorem 1"
    with pytest.raises(ValueError, match="reference"):
        judge("e", "c", 1.0, 1.0, 0.1, reference="")


def test_verdicts_round_trip_through_their_dict():
    for v in (judge("e", "c", 1.0, float("inf"), 0.1), judge("e", "c", float("nan"), 1.0, 0.1),
              judge_condition("e", "c", False, partly=True, reason="why")):
        assert Verdict.from_dict(v.as_dict()).as_dict() == v.as_dict()
    assert verdict_table([judge("e", "c", 1.0, 1.0, 0.1)])[0].keys() == {
        "experiment", "kind", "data", "claim", "status", "measure", "ours", "paper", "reference",
        "tolerance", "tolerance_note", "reason", "text"}
    with pytest.raises(ValueError, match="unknown fields"):
        Verdict.from_dict({"experiment": "e", "claim": "c", "status": "not", "bogus": 1})


def test_the_runner_hands_back_typed_verdicts(tmp_path):
    def run(ctx):  # an experiment of the old style: verdict dicts under extra
        verdicts = [judge(ctx.name, "c", 1.0, 1.0, 0.1)]
        return ExperimentResult(summary="s", extra={"verdicts": [v.as_dict() for v in verdicts]})

    experiment = Experiment("typed-verdicts", "test", run, in_reproduce=False)
    result, out = run_experiment(experiment, out_dir=tmp_path / "o", quiet=True,
                                 show_progress=False)
    assert [type(v) for v in result.verdicts] == [Verdict]
    written = json.loads((out / "run.json").read_text())
    assert written["verdicts"] == [v.as_dict() for v in result.verdicts]
    assert written["rng"] == "invariant" and written["rng_impl"]


def test_progress_is_a_callback():
    algo = noisy_counter()
    params = CounterParams(jnp.asarray([1.0, 2.0]), jnp.asarray([0.5, 0.5]))
    told = []
    simulate(algo, params, make_key(0), 6, num_seeds=3, grid_ndim=1, time_chunk=4,
             progress=told.append)
    assert sum(told) == 3 * 6
    with pytest.raises(TypeError, match="callback"):
        simulate(algo, params, make_key(0), 6, grid_ndim=1, progress=True)


def test_the_runtime_lives_with_the_application_only():
    """The runtime and the chunk sharing are the application's (ldpjax_experiments.cluster); the engine
    keeps no module that answers for them (no path from the core back to the application)."""
    import importlib.util

    from ldpjax_experiments import cluster

    assert importlib.util.find_spec("ldpjax.engine.distributed") is None
    assert importlib.util.find_spec("ldpjax.engine.store") is None
    assert cluster.config_from_env({}).source == "single"
    assert callable(cluster.run_shared) and callable(cluster.agree)
