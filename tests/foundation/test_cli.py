"""The ``ldpjax`` command line: list, run, reproduce, errors and outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ldpjax.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_list_shows_registered_experiments(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "demo" in out


def test_unknown_experiment_and_bad_options_exit_2(capsys, tmp_path):
    assert main(["run", "no-such-experiment"]) == 2
    assert "unknown experiment 'no-such-experiment'" in capsys.readouterr().err
    assert main(["run", "demo", "--horizon", "ten", "--out", str(tmp_path)]) == 2
    assert "invalid" in capsys.readouterr().err
    assert main(["run", "demo", "--bogus", "1", "--out", str(tmp_path)]) == 2
    assert main(["run", "demo", "--mu", "-1", "--out", str(tmp_path)]) == 2
    assert "mu must be in (0, inf]" in capsys.readouterr().err
    assert main(["run", "demo", "--seeds", "0", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "--only", "nope", "--out", str(tmp_path)]) == 2
    assert main(["list", "extra"]) == 2


def test_run_writes_tables_plots_and_run_json(tmp_path, capsys):
    out = tmp_path / "demo"
    code = main(["run", "demo", "--seeds", "200", "--horizon", "100", "--mu", "1,2",
                 "--out", str(out), "--no-progress"])
    assert code == 0
    for name in ("rmse.csv", "rmse.json", "rmse.png", "run.json", "summary.txt"):
        assert (out / name).is_file(), name
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["mu"] == [1.0, 2.0] and info["seeds"] == 200
    assert info["key_impl"] == "threefry2x32" and info["jax"]["backend"] == "cpu"
    assert {"jax", "jaxlib", "numpy", "ldpjax", "python"} <= set(info["versions"])
    table = json.loads((out / "rmse.json").read_text())
    assert table["columns"][:2] == ["mu", "t"] and len(table["rows"]) == 2 * 5
    # the simulated RMSE is sqrt(t)/mu within the chi-square sampling band (n = 200 seeds:
    # relative sd of the MSE sqrt(2/200) = 0.1, so of the RMSE ~0.05; allow 5 sd = 25%)
    for row in table["rows"]:
        assert abs(row["ratio"] - 1) < 0.25
    assert "Private counting" in capsys.readouterr().out
    # rerunning resumes from the saved chunks instead of recomputing
    assert main(["run", "demo", "--seeds", "200", "--horizon", "100", "--mu", "1,2",
                 "--out", str(out), "--no-progress"]) == 0
    assert "0 chunk(s) computed, 1 loaded" in (out / "summary.txt").read_text()


def test_console_script_reproduce_subset(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "ldpjax.cli", "reproduce", "--only", "demo", "--seeds", "50",
         "--out", str(tmp_path), "--key-impl", "rbg"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "reproduce.json").read_text())
    assert report[0]["experiment"] == "demo" and report[0]["status"] == "ok"
    assert json.loads((tmp_path / "demo" / "run.json").read_text())["key_impl"] == "rbg"


def test_plugin_experiments(tmp_path, capsys):
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(
        "from ldpjax.experiments import Experiment, ExperimentResult\n"
        "EXPERIMENT = Experiment('my-plugin', 'a user experiment',\n"
        "    lambda ctx: ExperimentResult(tables={'t': [{'a': 1}]}, summary='ok'))\n"
    )
    assert main(["--plugin", str(plugin), "run", "my-plugin", "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "t.csv").read_text().splitlines() == ["a", "1"]
    assert main(["--plugin", str(tmp_path / "missing.py"), "list"]) == 2


def test_run_help(capsys):
    assert main(["run", "demo", "--help"]) == 0
    assert "--horizon" in capsys.readouterr().out


@pytest.mark.slow
def test_full_reproduce_runs_everything(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "ldpjax.cli", "reproduce", "--out", str(tmp_path),
                           "--no-progress"], capture_output=True, text=True, env=env, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "reproduce.json").read_text())
    assert all(entry["status"] in ("ok", "skipped") for entry in report)
