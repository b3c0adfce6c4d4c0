"""``ldpjax reproduce --jobs N``: experiments in worker processes, same outputs as one by one."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jax
import pytest

from ldpjax_experiments.cli import main
from ldpjax_experiments.jobs import core_groups

pytestmark = pytest.mark.usefixtures("lean_worker")  # starts processes (tests/plugins/memory.py)

PLUGIN = """
import os
import jax.numpy as jnp
from ldpjax_experiments import Experiment, ExperimentResult
from ldpjax_experiments.verdicts import judge

def cores():
    # the process that ran the experiment and the cores it may use
    return [{'pid': os.getpid(), 'cores': ' '.join(map(str, sorted(os.sched_getaffinity(0))))}]

def counted(ctx):
    total = float(jnp.sum(jnp.arange(10.0)))  # a JAX computation inside the worker
    print("counted printed this")
    v = [judge('j-count', 'sum is 45', total, 45.0, 0.5, tolerance_note='exact')]
    return ExperimentResult(tables={'t': [{'sum': total}], 'cores': cores()},
                            summary='One claim.', extra={'verdicts': [x.as_dict() for x in v]})

def two_claims(ctx):
    v = [judge('j-two', 'a', 1.0, 1.0, 0.1), judge('j-two', 'b', 3.0, 2.0, 0.1, reason='off')]
    return ExperimentResult(tables={'t': [{'a': 1}], 'cores': cores()}, summary='Two claims.',
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
    # the run's own clock: the workers' CPU time is counted (each imports JAX: well over 0.2 s)
    assert report["wall_seconds"] > 0 and report["cpu_seconds"] > 0.2
    assert report["cores"] == len(os.sched_getaffinity(0))
    # JAX's persistent cache as this process has it (the suite's conftest may have set one)
    entries = report["compile_cache_entries_at_start"]
    if jax.config.jax_compilation_cache_dir:
        assert isinstance(entries, int) and entries >= 0
    else:
        assert entries is None
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

    # each worker ran on its own share of the cores; this process (--jobs 1) on all of them
    allowed = tuple(sorted(os.sched_getaffinity(0)))
    shares = core_groups(allowed, 2) or [allowed]  # one core: nothing to split
    seen = {}
    for name in ("j-count", "j-two"):
        assert _cores(tmp_path / "seq" / name) == (os.getpid(), allowed)
        pid, mine = _cores(tmp_path / "par" / name)
        assert pid != os.getpid() and mine in shares
        seen[pid] = mine
    if len(seen) == 2 and len(allowed) >= 2:  # two workers: disjoint shares
        first, second = seen.values()
        assert not set(first) & set(second)


def _cores(folder: Path) -> tuple[int, tuple[int, ...]]:
    pid, cores = (folder / "cores.csv").read_text().splitlines()[1].split(",")
    return int(pid), tuple(int(c) for c in cores.split())


def test_core_groups_split_the_cores_into_disjoint_near_equal_shares():
    assert core_groups([0, 1], 2) == [(0,), (1,)]
    assert core_groups([3, 1, 2, 0, 4], 2) == [(0, 1, 2), (3, 4)]
    assert core_groups(range(8), 3) == [(0, 1, 2), (3, 4, 5), (6, 7)]
    assert core_groups([0], 2) == [] and core_groups([0, 1], 0) == []
    for cores in (range(1), range(5), range(16), [2, 5, 7, 11]):
        for jobs in range(1, 6):
            groups = core_groups(cores, jobs)
            if len(list(cores)) < jobs:
                assert groups == []
                continue
            assert len(groups) == jobs and all(groups)
            assert sorted(c for g in groups for c in g) == sorted(cores)  # each core once
            sizes = [len(g) for g in groups]
            assert max(sizes) - min(sizes) <= 1


@pytest.mark.slow  # starts worker processes; the fast tier keeps the failure report above
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
    from ldpjax_experiments import Experiment, ExperimentResult, register
    from ldpjax_experiments.base import _REGISTRY

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


# ------------------------------------------------------- the orchestration, called directly
REPRODUCE_KEYS = ["command", "size", "jobs", "wall_seconds", "cpu_seconds", "cores",
                  "compile_cache_entries_at_start", "experiments", "verdicts"]


def test_reproduce_function_returns_what_it_writes(tmp_path, capsys):
    """``reproduce(...)`` without the command line: the typed result and reproduce.json agree
    with each other and with the demo's own run.json (written by the runner, not by it)."""
    from ldpjax_experiments.reproduce import ExperimentOutcome, ReproduceResult, reproduce
    from ldpjax_experiments.verdicts import Verdict

    out = tmp_path / "rep"
    result = reproduce(out, only=("demo",), seeds=20, jobs=1, quiet=True, show_progress=False,
                       command=["test", "reproduce"])
    assert capsys.readouterr().out == ""  # quiet: nothing printed
    assert isinstance(result, ReproduceResult) and result.path == out / "reproduce.json"
    assert result.jobs == 1 and result.size == "small" and result.failed == ()
    (demo,) = result.outcomes
    assert isinstance(demo, ExperimentOutcome)
    assert (demo.experiment, demo.status, demo.output) == ("demo", "ok", str(out / "demo"))
    run_json = json.loads((out / "demo" / "run.json").read_text())
    assert run_json["seeds"] == 20 and run_json["command"] == ["test", "reproduce"]
    assert all(isinstance(v, Verdict) for v in result.verdicts)
    assert [v.claim for v in result.verdicts] == [v["claim"] for v in run_json["verdicts"]]
    assert result.run_seconds <= result.wall_seconds
    written = json.loads(result.path.read_text())
    assert list(written) == REPRODUCE_KEYS  # the keys and their order, as docs/pages/cli.md
    assert written["command"] == ["test", "reproduce"] and written["jobs"] == 1
    assert written["wall_seconds"] == result.wall_seconds
    assert written["experiments"] == [{"experiment": "demo", "status": "ok",
                                       "output": str(out / "demo"),
                                       "wall_seconds": demo.wall_seconds,
                                       "verdicts": len(run_json["verdicts"])}]
    assert [(r["experiment"], r["claim"], r["status"]) for r in written["verdicts"]] == [
        ("demo", v["claim"], v["status"]) for v in run_json["verdicts"]]
    assert list(result.verdict_rows) == written["verdicts"]


def test_reproduce_function_reports_failed_and_skipped_experiments(tmp_path, capsys):
    """An experiment that raises is an outcome, not an exception; one whose data is missing is
    skipped with the reason; both keep the registry order. Bad arguments name the parameter."""
    from ldpjax_experiments import Experiment, ExperimentResult, register
    from ldpjax_experiments.base import _REGISTRY
    from ldpjax_experiments.reproduce import reproduce

    def fine(ctx):
        return ExperimentResult(tables={"t": [{"x": 1}]}, summary="fine")

    def broken(ctx):
        raise RuntimeError("broken on purpose")

    made = [Experiment("r-fine", "t", fine, in_reproduce=False, order=1),
            Experiment("r-broken", "t", broken, in_reproduce=False, order=2),
            Experiment("r-missing", "t", fine, in_reproduce=False, order=3,
                       requires=lambda: "no such data here")]
    try:
        for experiment in made:
            register(experiment)
        result = reproduce(tmp_path / "r", only="r-missing, r-broken,r-fine", quiet=True,
                           show_progress=False, compile_cache=False)
        assert [(o.experiment, o.status) for o in result.outcomes] == [
            ("r-fine", "ok"), ("r-broken", "failed"), ("r-missing", "skipped")]
        assert result.failed == ("r-broken",)
        assert result.outcomes[1].error == "RuntimeError: broken on purpose"
        assert result.outcomes[2].reason == "no such data here"
        assert result.outcomes[2].wall_seconds is None
        written = json.loads(result.path.read_text())["experiments"]
        assert written[2] == {"experiment": "r-missing", "status": "skipped",
                              "reason": "no such data here"}
        assert "output" not in written[1] and written[1]["verdicts"] == 0
        printed = capsys.readouterr()
        assert printed.out == "" and printed.err == ""  # quiet: no traceback either
        for bad, message in ((dict(only="r-fine,nope"), "unknown experiment(s) ['nope']"),
                             (dict(jobs=0), "jobs must be >= 1, got 0"),
                             (dict(seeds=0), "seeds must be >= 1, got 0")):
            with pytest.raises(ValueError, match=re.escape(message)):
                reproduce(tmp_path / "bad", **{"only": "r-fine", **bad})
        assert not (tmp_path / "bad").exists()
    finally:
        for experiment in made:
            _REGISTRY.pop(experiment.name, None)
