"""The verdict table a reviewer reads: what each row was judged on, self-checks counted apart
from the papers' claims, rows readable on their own, and a cold run that says it started."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ldpjax_experiments import Experiment, ExperimentResult, run_experiment
from ldpjax_experiments.cli import main
from ldpjax_experiments.verdicts import (
    Verdict,
    count_line,
    format_verdict_table,
    judge,
    judge_condition,
    verdict_table,
    with_data,
)

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


def _three():
    return [
        judge("e", "mean is 1", 1.02, 1.0, 0.05, measure="mean clicks per visitor",
              tolerance_note="2 SE", data="real"),
        judge_condition("e", "spend <= gamma", True, ours=1.0, paper=1.0, kind="self-check",
                        tolerance_note="largest realised spend / gamma"),
        judge("e", "sd is 2", 3.0, 2.0, 0.1, measure="sd of the release (counts)",
              reason="our noise is larger."),
    ]


def test_fields_reach_the_rows_the_json_and_the_table():
    verdicts = with_data(_three(), "synthetic stand-in")
    assert [v.data for v in verdicts] == ["real", "synthetic stand-in", "synthetic stand-in"]
    rows = verdict_table(verdicts)
    assert [(r["kind"], r["data"]) for r in rows] == [
        ("paper claim", "real"), ("self-check", "synthetic stand-in"),
        ("paper claim", "synthetic stand-in")]
    assert [Verdict.from_dict(json.loads(json.dumps(v.as_dict()))) for v in verdicts] == list(
        verdicts)
    table = format_verdict_table(rows)
    head = table.splitlines()[0].split()
    assert head[:3] == ["experiment", "kind", "data"]
    assert "self-check" in table and "synthetic stand-in" in table
    assert "measured: mean clicks per visitor: ours 1.02 vs paper 1" in table


def test_a_self_check_is_not_counted_among_the_papers_claims():
    verdicts = _three()
    line = count_line(verdicts)
    # two paper claims (one reproduced, one not); the self-check apart
    assert line == "1 reproduced, 0 partly, 1 not (of 2 paper claims); self-checks: 1 of 1 hold"
    assert format_verdict_table(verdicts).splitlines()[-1] == line


def test_bad_kind_or_data_label_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        judge_condition("e", "c", True, kind="claim")
    with pytest.raises(ValueError, match="data must be one of"):
        with_data([judge_condition("e", "c", True)], "real-ish")


def test_a_condition_note_becomes_what_the_row_measures():
    v = judge_condition("e", "A beats B", False, partly=True, ours=0.5, paper=1.0,
                        tolerance_note="share of cells where A - B > 2 SE")
    assert v.numbers() == "share of cells where A - B > 2 SE: ours 0.5 vs paper 1"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{3,}", text.lower())) - {"ours", "paper", "tolerance"}


@pytest.mark.parametrize("name", ["reproduce.json", "reproduce-no-data.json"])
def test_every_row_of_the_docs_runs_is_readable_on_its_own(name):
    """Each row with numbers says what they measure (no bare ``ours 0 paper 0``), says what
    data it was judged on, and no two rows of one experiment print the same numbers."""
    path = RESULTS / name
    if not path.is_file():
        pytest.skip(f"{path} not generated")
    rows = json.loads(path.read_text())["verdicts"]
    assert rows
    if not all("kind" in row for row in rows):
        pytest.skip(f"{path} was written before verdicts said their kind and data: rerun the "
                    "command of docs/results/README.md")
    for row in rows:
        if row.get("ours") is not None or row.get("paper") is not None:
            assert row.get("measure") and _words(row["measure"]), row
        assert row.get("data"), row
    seen = {}
    for row in rows:
        if row["kind"] == "demo":
            key = (row["ours"], row["paper"], row["tolerance"])
            assert key not in seen, (row, seen.get(key))
            seen[key] = row


def test_no_data_run_judges_the_data_experiments_on_stand_ins():
    path = RESULTS / "reproduce-no-data.json"
    if not path.is_file():
        pytest.skip(f"{path} not generated")
    rows = json.loads(path.read_text())["verdicts"]
    for name in ("experts-covid", "bandits-zozo", "bandits-portfolio"):
        assert {r["data"] for r in rows if r["experiment"] == name} == {"synthetic stand-in"}


def test_shared_data_variable_points_the_loaders_at_an_empty_folder(tmp_path, monkeypatch):
    from ldpjax.datasets.covid import shared_covid_dir
    from ldpjax_experiments.bandits_simulation import resolve_data_dir

    monkeypatch.setenv("LDPJAX_SHARED_DATA", str(tmp_path))
    assert resolve_data_dir() == tmp_path  # the empty folder: no OBD / ASOS file in it
    assert shared_covid_dir() is None


def test_a_run_says_it_started_before_the_experiment_computes(tmp_path, capsys):
    printed_before = []

    def run(ctx):
        printed_before.append(capsys.readouterr().err)
        return ExperimentResult(summary="s", verdicts=(
            judge(ctx.name, "c", 1.0, 1.0, 0.1, measure="a number", data="synthetic"),))

    experiment = Experiment("progress-early", "test", run, in_reproduce=False)
    run_experiment(experiment, out_dir=tmp_path / "o", quiet=True, show_progress=True)
    assert "[progress-early] started" in printed_before[0]


def test_reproduce_writes_the_fields_and_counts_a_self_check_apart(tmp_path, capsys):
    plugin = tmp_path / "kinds_plugin.py"
    plugin.write_text(
        "from ldpjax_experiments import Experiment, ExperimentResult, judge, judge_condition\n"
        "def run(ctx):\n"
        "    v = (judge('k-plugin', 'mean is 1', 1.02, 1.0, 0.05, measure='mean (units)',\n"
        "               data='synthetic'),\n"
        "         judge_condition('k-plugin', 'spend <= gamma', True, ours=1.0, paper=1.0,\n"
        "                         kind='self-check', data='synthetic',\n"
        "                         tolerance_note='largest spend / gamma'))\n"
        "    return ExperimentResult(summary='Two verdicts.', verdicts=v)\n"
        "EXPERIMENT = Experiment('k-plugin', 'kinds test', run, in_reproduce=False)\n"
    )
    out = tmp_path / "rep"
    assert main(["--plugin", str(plugin), "reproduce", "--only", "k-plugin", "--out", str(out),
                 "--no-progress", "--jobs", "1"]) == 0
    report = json.loads((out / "reproduce.json").read_text())
    assert [(v["kind"], v["data"]) for v in report["verdicts"]] == [
        ("paper claim", "synthetic"), ("self-check", "synthetic")]
    assert report["verdicts"][0]["text"] == "mean (units): ours 1.02 vs paper 1, tolerance 0.05"
    printed = capsys.readouterr().out
    assert "1 reproduced, 0 partly, 0 not (of 1 paper claims); self-checks: 1 of 1 hold" in printed
    run_json = json.loads((out / "k-plugin" / "run.json").read_text())
    assert run_json["verdicts"] == run_json["extra"]["verdicts"]
    assert [v["kind"] for v in run_json["verdicts"]] == ["paper claim", "self-check"]
