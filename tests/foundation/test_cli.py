"""The ``ldpjax`` command line: list, run, reproduce, errors and outputs."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import ldpjax
from ldpjax_experiments.checkpointing import ChunkStore
from ldpjax_experiments.cli import INTERRUPT_MESSAGE, main, quiet_xla_log
from ldpjax_experiments.outdir import LOCK_NAME, claim_output_dir

SCHEDULE_FIRST = 4  # long: pytest-xdist starts it early (tests/plugins/schedule.py)
pytestmark = pytest.mark.usefixtures("lean_worker")  # starts processes (tests/plugins/memory.py)

REPO = Path(__file__).resolve().parents[2]


def test_list_shows_registered_experiments(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "demo" in out


def test_unknown_experiment_and_bad_options_exit_2(capsys, tmp_path):
    assert main(["run", "no-such-experiment"]) == 2
    assert "unknown experiment 'no-such-experiment'" in capsys.readouterr().err
    assert main(["run", "demo", "--horizon", "ten", "--out", str(tmp_path)]) == 2
    assert "--horizon expects an integer, got 'ten'" in capsys.readouterr().err
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
    assert info["noise"].startswith("simulation: noise replayable from the seed")
    from ldpjax.engine.keys import DEFAULT_IMPL

    assert info["key_impl"] == DEFAULT_IMPL == info["rng_impl"] and info["jax"]["backend"] == "cpu"
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
        [sys.executable, "-m", "ldpjax_experiments.cli", "reproduce", "--only", "demo", "--seeds", "50",
         "--out", str(tmp_path), "--key-impl", "rbg"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "reproduce.json").read_text())["experiments"]
    assert report[0]["experiment"] == "demo" and report[0]["status"] == "ok"
    assert json.loads((tmp_path / "demo" / "run.json").read_text())["key_impl"] == "rbg"
    assert "verdicts against the papers" in proc.stdout


def test_plugin_experiments(tmp_path, capsys):
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(
        "from ldpjax_experiments import Experiment, ExperimentResult\n"
        "EXPERIMENT = Experiment('my-plugin', 'a user experiment',\n"
        "    lambda ctx: ExperimentResult(tables={'t': [{'a': 1}]}, summary='ok'))\n"
    )
    assert main(["--plugin", str(plugin), "run", "my-plugin", "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "t.csv").read_text().splitlines() == ["a", "1"]
    assert main(["--plugin", str(tmp_path / "missing.py"), "list"]) == 2
    # a plugin whose own import fails: one line on stderr and exit code 2, no traceback
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("import ldpjax\nraise RuntimeError('boom in the plugin')\n")
    capsys.readouterr()
    assert main(["--plugin", str(broken), "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "boom in the plugin" in err and "Traceback" not in err


def test_run_help(capsys):
    assert main(["run", "demo", "--help"]) == 0
    assert "--horizon" in capsys.readouterr().out


@pytest.mark.slow
def test_full_reproduce_runs_everything(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "ldpjax_experiments.cli", "reproduce", "--out", str(tmp_path),
                           "--no-progress"], capture_output=True, text=True, env=env, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "reproduce.json").read_text())
    assert all(entry["status"] in ("ok", "skipped") for entry in report["experiments"])


# ------------------------------------------------------------------ failure paths (issue 12)
TINY = ["--seeds", "20", "--horizon", "20", "--mu", "1", "--no-progress"]


def _one_line_error(err: str) -> str:
    # progress lines ("[demo] started ...", printed as a run starts) are not part of the error
    lines = [line for line in err.splitlines()
             if line.strip() and not re.match(r"\[[\w-]+\] ", line)]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_argument_errors_speak_the_users_words(tmp_path, capsys):
    out = tmp_path / "new" / "demo"
    assert main(["run", "demo", "--mu", "abc", "--out", str(out)]) == 2
    assert "--mu expects comma-separated numbers, got 'abc'" in capsys.readouterr().err
    assert main(["run", "demo", "--mu", "1,nan", "--out", str(out)]) == 2
    assert "--mu expects comma-separated numbers" in capsys.readouterr().err
    assert main(["run", "demo", "--rate", "half", "--out", str(out)]) == 2
    assert "--rate expects a number, got 'half'" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_refused_run_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "a" / "b"
    assert main(["run", "demo", *TINY[:-3], "--mu", "-1", "--out", str(out)]) == 2
    assert "mu must be in (0, inf]" in _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "a").exists()
    # an existing folder is left as it was
    out.mkdir(parents=True)
    (out / "keep.txt").write_text("x")
    assert main(["run", "demo", *TINY[:-3], "--mu", "-1", "--out", str(out)]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_output_folder_checked_before_computing(tmp_path, capsys, monkeypatch):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert main(["run", "demo", *TINY, "--out", str(a_file)]) == 2
    assert "is a file, not a folder" in _one_line_error(capsys.readouterr().err)
    assert main(["run", "demo", *TINY, "--out", str(a_file / "sub")]) == 2
    assert "is a file" in _one_line_error(capsys.readouterr().err)
    if Path("/proc/self").is_dir():  # a virtual file system: nothing can be created there
        assert main(["run", "demo", *TINY, "--out", "/proc/ldpjax-test"]) == 2
        assert "not writable" in _one_line_error(capsys.readouterr().err)
    # free space: demand more than any disk has -> refused, nothing created, nothing computed
    monkeypatch.setenv("LDPJAX_MIN_FREE_MB", str(2**40))
    calls = []
    monkeypatch.setattr("ldpjax_experiments.runner._run_and_write",
                        lambda *a, **k: calls.append(1))
    assert main(["run", "demo", *TINY, "--out", str(tmp_path / "big")]) == 2
    assert "not enough free space" in _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "big").exists() and not calls
    assert main(["reproduce", "--only", "demo", "--out", str(tmp_path / "rep")]) == 2
    assert "not enough free space" in _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "rep").exists() and not calls


def test_lock_keeps_two_runs_apart_and_stale_lock_is_taken_over(tmp_path, capsys):
    out = tmp_path / "demo"
    with claim_output_dir(out):  # another run holds the folder (flock is per open file)
        assert main(["run", "demo", *TINY, "--out", str(out)]) == 2
        line = _one_line_error(capsys.readouterr().err)
        assert f"another ldpjax run (PID {os.getpid()}) is using output folder" in line
        assert not (out / "run.json").exists()
    assert not (out / LOCK_NAME).exists()  # released
    # a lock file left by a dead process is taken over
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / LOCK_NAME).write_text(f"{dead.pid}\n")
    assert main(["run", "demo", *TINY, "--out", str(out)]) == 0
    assert (out / "run.json").is_file() and not (out / LOCK_NAME).exists()


def test_full_disk_while_writing_is_one_line_and_leaves_no_temp_file(tmp_path, capsys,
                                                                     monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("ldpjax_experiments.checkpointing.np.savez", full)
    out = tmp_path / "demo"
    assert main(["run", "demo", *TINY, "--out", str(out)]) == 1
    assert "no space left on the device" in _one_line_error(capsys.readouterr().err)
    assert not list(out.rglob("*.tmp-*"))


def test_chunk_store_temp_files_of_live_processes_survive(tmp_path):
    store = ChunkStore(tmp_path, "f" * 64, {"what": "test"})
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live_tmp = store.dir / f"chunk-0000000000-0000000001.npz.tmp-{os.getppid()}-abcd"
    dead_tmp = store.dir / f"chunk-0000000000-0000000001.npz.tmp-{dead.pid}-abcd"
    live_tmp.write_bytes(b"partial")
    dead_tmp.write_bytes(b"partial")
    store = ChunkStore(tmp_path, "f" * 64, {"what": "test"})  # a second run opens the store
    assert live_tmp.exists() and not dead_tmp.exists()
    store.save(0, 1, [np.arange(3)])
    assert [x.tolist() for x in store.load(0, 1, 1)] == [[0, 1, 2]]


def test_mu_inf_runs(tmp_path):
    out = tmp_path / "inf"
    assert main(["run", "demo", "--seeds", "10", "--horizon", "20", "--mu", "inf,1",
                 "--out", str(out), "--no-progress"]) == 0
    rows = json.loads((out / "rmse.json").read_text())["rows"]
    assert [r["rmse"] for r in rows if r["mu"] == "inf"] == [0.0] * 5


def test_version_and_python_dash_m(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"ldpjax {ldpjax.__version__}"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "ldpjax_experiments", "list"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "demo" in proc.stdout, proc.stderr


def test_bench_subcommand_is_wired(monkeypatch, capsys):
    seen = {}

    def add_arguments(parser):
        parser.add_argument("--repeat", type=int, default=1)

    def run(args):
        seen["repeat"] = args.repeat
        return 0

    fake = types.ModuleType("ldpjax_experiments.bench")
    fake.add_arguments, fake.run = add_arguments, run
    monkeypatch.setitem(sys.modules, "ldpjax_experiments.bench", fake)
    assert main(["bench", "--repeat", "3"]) == 0 and seen == {"repeat": 3}
    assert main(["bench", "--repeat", "x"]) == 2
    assert "--repeat expects" not in capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "ldpjax_experiments.bench", None)  # not installed
    assert main(["bench"]) == 2
    assert "ldpjax_experiments.bench is not part of this installation" in capsys.readouterr().err


def test_reproduce_collects_verdicts(tmp_path, capsys):
    plugin = tmp_path / "verdict_plugin.py"
    plugin.write_text(
        "from ldpjax_experiments import Experiment, ExperimentResult, judge\n"
        "def run(ctx):\n"
        "    v = [judge('v-plugin', 'mean is 1', 1.02, 1.0, 0.05, tolerance_note='2 SE'),\n"
        "         judge('v-plugin', 'sd is 2', 3.0, 2.0, 0.1, reason='our noise is larger')]\n"
        "    return ExperimentResult(tables={'t': [{'a': 1}]}, summary='Two claims.',\n"
        "                            extra={'verdicts': [x.as_dict() for x in v]})\n"
        "EXPERIMENT = Experiment('v-plugin', 'verdict test', run, in_reproduce=False)\n"
    )
    out = tmp_path / "rep"
    assert main(["--plugin", str(plugin), "reproduce", "--only", "v-plugin", "--out",
                 str(out), "--no-progress"]) == 0
    report = json.loads((out / "reproduce.json").read_text())
    assert [v["status"] for v in report["verdicts"]] == ["reproduced", "not"]
    assert {v["experiment"] for v in report["verdicts"]} == {"v-plugin"}
    assert report["experiments"][0]["verdicts"] == 2
    printed = capsys.readouterr().out
    assert "1 reproduced, 0 partly, 1 not (of 2 paper claims)" in printed
    assert "why: our noise is larger" in printed
    summary = (out / "v-plugin" / "summary.txt").read_text()
    assert summary.startswith("Two claims.") and "[not] sd is 2" in summary
    assert len(json.loads((out / "v-plugin" / "run.json").read_text())["verdicts"]) == 2


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    """SIGINT during the computation: exit 130, one line, no traceback, no crash (and, with a
    warm compilation cache, none of XLA's log lines either)."""
    out = tmp_path / "int"
    # this process's TF_CPP_MIN_LOG_LEVEL is `import jax`'s default, not a user's choice
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env["PYTHONPATH"] = str(REPO)
    # `python -m ldpjax_experiments ...`, with SIGINT handled as in a terminal (a shell's background job,
    # which this test may be, starts its children with SIGINT ignored)
    launcher = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
                " sys.argv[0] = 'ldpjax'; runpy.run_module('ldpjax_experiments', run_name='__main__')")
    proc = subprocess.Popen(
        [sys.executable, "-c", launcher, "run", "demo", "--seeds", "20000", "--horizon", "1000",
         "--out", str(out), "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("chunks/*/manifest.json")) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never started computing"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert [line for line in err.splitlines() if line.strip()] == [
        f"ldpjax: {INTERRUPT_MESSAGE}"]
    assert not (out / "run.json").exists()
    with claim_output_dir(out):  # the lock died with the process: the folder is free again
        pass


def test_run_with_two_processes_matches_one(tmp_path):
    """`ldpjax run NAME --processes 2` gives tables byte-identical to one process (this one:
    the single-process run is the same command in-process)."""
    # the session's compilation cache (LDPJAX_CACHE_DIR, tests/plugins/compile_cache.py) and nothing else
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("LDPJAX_") or k == "LDPJAX_CACHE_DIR"}
    env["JAX_PLATFORMS"] = "cpu"
    args = ["run", "demo", "--seeds", "40", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    two = subprocess.run([sys.executable, "-m", "ldpjax_experiments", *args, "--out", str(tmp_path / "two"),
                          "--processes", "2"], env=env, capture_output=True)
    assert two.returncode == 0, two.stderr.decode()[-2000:]
    names = sorted(p.name for p in (tmp_path / "one").glob("*.csv"))
    assert names
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert json.loads((tmp_path / "two" / "run.json").read_text())["jax"]["process_count"] == 2


def test_cli_module_imports_without_jax():
    """The console script reaches its Ctrl-C handler before JAX is imported (no traceback window)."""
    code = "import sys, ldpjax_experiments.cli; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    # `reproduce` reads its clock from ldpjax_experiments.reproduce before JAX is imported, so
    # reproduce.json's wall_seconds and cpu_seconds include JAX's import
    code = "import sys, ldpjax_experiments.reproduce; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_command_quiets_xla_log_unless_the_user_chose_a_level():
    environ = {}
    assert quiet_xla_log(environ) and environ == {"TF_CPP_MIN_LOG_LEVEL": "3"}
    chosen = {"TF_CPP_MIN_LOG_LEVEL": "0"}
    assert not quiet_xla_log(chosen) and chosen == {"TF_CPP_MIN_LOG_LEVEL": "0"}


@pytest.mark.slow  # the Ctrl-C test sees the same on the suite's warm cache, in the fast suite
def test_a_warm_run_prints_nothing_on_stderr(tmp_path):
    """Two runs of the command on one compilation cache: the second loads cached kernels and
    says nothing on stderr (jaxlib 0.10.1 logs two ERROR lines per cached kernel on most x86
    CPUs otherwise; see ``quiet_xla_log``)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(PYTHONPATH=str(REPO), LDPJAX_CACHE_DIR=str(tmp_path / "cache"))
    for name in ("cold", "warm"):
        proc = subprocess.run(
            [sys.executable, "-m", "ldpjax_experiments", "run", "demo", "--seeds", "8",
             "--horizon", "50", "--out", str(tmp_path / name), "--no-progress"],
            capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert any((tmp_path / "cache" / "jax-compile").iterdir())
    assert proc.stderr.strip() == ""
