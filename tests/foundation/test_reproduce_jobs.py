"""``ldpjax reproduce --jobs N``: experiments in worker processes, same outputs as one by one."""

from __future__ import annotations

import json
from pathlib import Path

from ldpjax.cli import main

PLUGIN = """
import os
import jax.numpy as jnp
from ldpjax.experiments import Experiment, ExperimentResult
from ldpjax.experiments.verdicts import judge

def counted(ctx):
    total = float(jnp.sum(jnp.arange(10.0)))  # a JAX computation inside the worker
    print("counted printed this")
    v = [judge('j-count', 'sum is 45', total, 45.0, 0.5, tolerance_note='exact')]
    return ExperimentResult(tables={'t': [{'sum': total}]}, summary='One claim.',
                            extra={'verdicts': [x.as_dict() for x in v]})

def two_claims(ctx):
    v = [judge('j-two', 'a', 1.0, 1.0, 0.1), judge('j-two', 'b', 3.0, 2.0, 0.1, reason='off')]
    return ExperimentResult(tables={'t': [{'a': 1}]}, summary='Two claims.',
                            extra={'verdicts': [x.as_dict() for x in v]})

def raises(ctx):
    raise RuntimeError("this experiment is broken")

def crashes(ctx):
    os._exit(3)  # the worker process dies without a word

EXPERIMENTS = [
    Experiment('j-count', 'jobs test', counted, in_reproduce=False, order=1),
    Experiment('j-two', 'jobs test', two_claims, in_reproduce=False, order=2, cost=5.0),
    Experiment('j-raise', 'jobs test', raises, in_reproduce=False, order=3),
    Experiment('j-crash', 'jobs test', crashes, in_reproduce=False, order=4),
]
"""


def _reproduce(tmp_path: Path, only: str, jobs: int, folder: str) -> tuple[int, dict]:
    plugin = tmp_path / "jobs_plugin.py"
    plugin.write_text(PLUGIN)
    out = tmp_path / folder
    code = main(["--plugin", str(plugin), "reproduce", "--only", only, "--jobs", str(jobs),
                 "--out", str(out), "--no-progress", "--no-compile-cache"])
    return code, json.loads((out / "reproduce.json").read_text())


def test_parallel_run_equals_one_by_one_and_reports_failures(tmp_path, capsys):
    code, report = _reproduce(tmp_path, "j-count,j-two,j-raise", 2, "par")
    assert code == 1  # j-raise failed: the run fails, the others are reported
    assert report["jobs"] == 2
    status = {e["experiment"]: e["status"] for e in report["experiments"]}
    assert status == {"j-count": "ok", "j-two": "ok", "j-raise": "failed"}
    assert [e["experiment"] for e in report["experiments"]] == ["j-count", "j-two", "j-raise"]
    failed = next(e for e in report["experiments"] if e["experiment"] == "j-raise")
    assert failed["error"] == "RuntimeError: this experiment is broken"
    # verdicts in registry order (j-two started first: its cost is larger), typed end to end
    assert [(v["experiment"], v["status"]) for v in report["verdicts"]] == [
        ("j-count", "reproduced"), ("j-two", "reproduced"), ("j-two", "not")]
    printed = capsys.readouterr()
    assert "2 at a time" in printed.out and "counted printed this" in printed.out
    assert "this experiment is broken" in (tmp_path / "par" / "j-raise.log").read_text()
    assert "counted printed this" in (tmp_path / "par" / "j-count.log").read_text()

    code, one_by_one = _reproduce(tmp_path, "j-count,j-two", 1, "seq")
    assert code == 0 and one_by_one["jobs"] == 1
    assert one_by_one["verdicts"] == report["verdicts"]
    for name in ("j-count", "j-two"):
        assert ((tmp_path / "seq" / name / "t.csv").read_text()
                == (tmp_path / "par" / name / "t.csv").read_text())


def test_a_dead_worker_fails_its_experiment_instead_of_hanging(tmp_path, capsys):
    code, report = _reproduce(tmp_path, "j-crash,j-count", 2, "crash")
    assert code == 1
    crashed = next(e for e in report["experiments"] if e["experiment"] == "j-crash")
    assert crashed["status"] == "failed" and "worker process died" in crashed["error"]


def test_jobs_below_one_is_a_usage_error(tmp_path, capsys):
    assert main(["reproduce", "--only", "demo", "--jobs", "0", "--out", str(tmp_path / "r")]) == 2
    assert "--jobs must be >= 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_experiments_registered_in_this_process_run_here(tmp_path, capsys):
    """A worker would not see an experiment registered by this process only: one at a time."""
    from ldpjax.experiments import Experiment, ExperimentResult, register
    from ldpjax.experiments.base import _REGISTRY

    def run(ctx):
        return ExperimentResult(tables={"t": [{"x": 1}]}, summary="here")

    names = ["j-local-a", "j-local-b"]
    try:
        for name in names:
            register(Experiment(name, "registered in-process", run, in_reproduce=False))
        out = tmp_path / "local"
        assert main(["reproduce", "--only", ",".join(names), "--jobs", "2", "--out", str(out),
                     "--no-progress", "--no-compile-cache"]) == 0
        report = json.loads((out / "reproduce.json").read_text())
        assert report["jobs"] == 1
        assert [e["status"] for e in report["experiments"]] == ["ok", "ok"]
    finally:
        for name in names:
            _REGISTRY.pop(name, None)
