"""Multi-process sweeps (ldpjax_experiments.cluster, ldpjax_experiments.checkpointing, ldpjax_experiments.launch) with real processes.

The sweeps run in subprocesses on 127.0.0.1 (``distributed_script.py``): one process alone, and
two processes started by ``python -m ldpjax_experiments.launch`` (each with 2 CPU devices, so the exchange
also covers processes with several devices). Records must be the same bytes.

The two sweeps that compare records chunk by chunk (two processes against one, and a sweep
whose process is killed, then resumed) start seven JAX processes between them, so they are
``slow``; the fast suite keeps the multi-process identity end to end through the CLI
(``tests/foundation/test_cli.py``: ``ldpjax run --processes 2`` gives the tables of one
process) and the launcher's failure paths here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ldpjax.engine.executor import local_devices
from ldpjax_experiments import cluster, launch
from tests.plugins.schedule import early_start

SCHEDULE_FIRST = 1  # long: pytest-xdist starts it early (tests/plugins/schedule.py)
pytestmark = pytest.mark.usefixtures("lean_worker")  # starts processes (tests/plugins/memory.py)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("distributed_script.py")
TIMEOUT = 300  # generous: the CI box may be loaded; a hang would be a bug


def _env(devices: int = 1) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LDPJAX_", "SLURM_")) and k != "XLA_FLAGS"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_PLATFORMS"] = "cpu"
    if devices > 1:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    return env


def _launch_cmd(args: list[str], processes: int = 2, script: Path = SCRIPT) -> list[str]:
    return [sys.executable, "-m", "ldpjax_experiments.launch", "--processes", str(processes),
            "--script", str(script), "--", *args]


def _launch(args: list[str], processes: int = 2, devices: int = 1, script: Path = SCRIPT):
    return subprocess.run(_launch_cmd(args, processes, script), env=_env(devices),
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO)


class _Started:
    """A subprocess started now and finished later: ``finish()`` returns a CompletedProcess.
    Its output goes to files (a full pipe would stall it until the test reads)."""

    def __init__(self, cmd: list[str], env: dict[str, str], logs: Path):
        self.cmd, self.logs = cmd, logs
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "stdout", "w") as out, open(logs / "stderr", "w") as err:
            self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True,
                                         cwd=REPO)

    def finish(self) -> subprocess.CompletedProcess:
        try:
            self.proc.wait(timeout=TIMEOUT)
        finally:
            self.stop()
        return subprocess.CompletedProcess(self.cmd, self.proc.returncode,
                                           (self.logs / "stdout").read_text(),
                                           (self.logs / "stderr").read_text())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


START_EARLY_FOR = ("test_two_processes_give_the_records_of_one_bit_for_bit",
                   "test_a_killed_process_sweep_resumes")


def start_early(folder: Path) -> dict[str, object]:
    """The one-process sweep, the two-process sweep and the sweep whose process is killed,
    started when the session starts (tests/plugins/schedule.py); the tests wait for them."""
    runs: dict[str, object] = {"folder": folder}
    for name, cmd, devices in (
        ("single", [sys.executable, str(SCRIPT), "sweep", str(folder / "single" / "out"),
                    str(folder / "single" / "ckpt")], 1),
        ("two", _launch_cmd(["sweep", str(folder / "two" / "out"), str(folder / "two" / "ckpt")]),
         2),
        ("killed", _launch_cmd(["kill", str(folder / "kill" / "out"),
                                str(folder / "kill" / "ckpt")]), 1),
    ):
        runs[name] = _Started(cmd, _env(devices), folder / f"{name}-logs")
    return runs


@pytest.fixture(scope="module")
def early(tmp_path_factory):
    return early_start(__name__, tmp_path_factory)


def _records(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _same_bytes(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes()
        for k in a
    )


def _chunk_files(ckpt: Path) -> list[Path]:
    return sorted(ckpt.glob("*/chunk-*.npz"))


@pytest.fixture(scope="module")
def single(early):
    """The sweep in one process (no launcher, no distributed runtime)."""
    root = early["folder"] / "single"
    proc = early["single"].finish()
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads((root / "out" / "info-p0.json").read_text())
    assert info["process_count"] == 1
    return root, _records(root / "out" / "records-p0.npz"), info


@pytest.mark.slow
def test_two_processes_give_the_records_of_one_bit_for_bit(single, early):
    root, reference, ref_info = single
    tmp_path = early["folder"] / "two"
    proc = early["two"].finish()  # two processes of 2 devices each
    assert proc.returncode == 0, proc.stderr[-3000:]
    for pid in (0, 1):  # every process returns the full result
        info = json.loads((tmp_path / "out" / f"info-p{pid}.json").read_text())
        assert info["process_count"] == 2 and info["devices"] == 2
        assert info["first"]["num_processes"] == 2
        assert (info["first"]["chunks_computed"], info["first"]["chunks_loaded"]) == (7, 0)
        # default seed chunk: one chunk alone, split into one chunk per process here
        assert ref_info["second"]["chunks_computed"] == 1
        assert info["second"]["chunks_computed"] == 2
        assert _same_bytes(_records(tmp_path / "out" / f"records-p{pid}.npz"), reference)
    # process 0 wrote every chunk, under the fingerprint of the one-process run
    files = _chunk_files(tmp_path / "ckpt")
    assert len(files) == 7
    assert [f.relative_to(tmp_path / "ckpt") for f in files] == [
        f.relative_to(root / "ckpt") for f in _chunk_files(root / "ckpt")
    ]
    assert info["first"]["fingerprint"] == ref_info["first"]["fingerprint"]


@pytest.mark.slow
def test_a_killed_process_sweep_resumes(single, early):
    _, reference, _ = single
    tmp_path = early["folder"] / "kill"
    out, ckpt = str(tmp_path / "out"), str(tmp_path / "ckpt")
    killed = early["killed"].finish()
    # process 1 SIGKILLed itself after round 1; the launcher stopped process 0 and says 128 + 9
    assert killed.returncode == 128 + signal.SIGKILL, killed.stderr[-3000:]
    assert len(_chunk_files(tmp_path / "ckpt")) == 2  # round 1, saved by process 0
    resumed = _launch(["sweep", out, ckpt])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    info = json.loads((tmp_path / "out" / "info-p1.json").read_text())
    assert (info["first"]["chunks_loaded"], info["first"]["chunks_computed"]) == (2, 5)
    assert _same_bytes(_records(tmp_path / "out" / "records-p1.npz"), reference)


@pytest.mark.slow  # three processes; the fast tier keeps the launcher's Ctrl-C test
def test_launcher_forwards_a_failure_and_stops_the_others(tmp_path):
    script = tmp_path / "fail.py"
    stamp = tmp_path / "failed-at"
    script.write_text(
        "import sys, time\n"
        "from ldpjax_experiments import cluster\n"
        "cfg = cluster.initialize()\n"
        "if cfg.process_id == 1:\n"
        f"    open({str(stamp)!r}, 'w').write(repr(time.time()))\n"
        "    sys.exit(3)\n"
        "cluster.barrier('never')  # process 1 never comes: the launcher must stop us\n"
    )
    proc = _launch([], script=script)
    assert proc.returncode == 3, proc.stderr[-3000:]
    # Stopped promptly: without the worker's immediate exit, process 1 waited at the runtime's
    # shutdown barrier and the launcher saw the failure only when process 0's collective timed
    # out (30 s, measured) -- or after JAX's 100 s heartbeat / 300 s shutdown timeouts.
    assert time.time() - float(stamp.read_text()) < 20


def test_launcher_ctrl_c_stops_every_process(tmp_path):
    script = tmp_path / "sleep.py"
    script.write_text(
        "import os, sys, time\n"
        "from ldpjax_experiments import cluster\n"
        "cfg = cluster.initialize()\n"
        f"open(os.path.join({str(tmp_path)!r}, f'pid-{{cfg.process_id}}'), 'w').write(str(os.getpid()))\n"
        "time.sleep(600)\n"
    )
    # A test session started in the background (``pytest &``) or by a runner that ignores
    # SIGINT hands that to the launcher, and Python installs no Ctrl-C handler where SIGINT is
    # ignored at start-up: the launcher installs it first, as a terminal's foreground job has it
    # (a wrapper, not ``preexec_fn``, which is unsafe to fork from a multithreaded process).
    launcher = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
                "runpy.run_module('ldpjax_experiments.launch', run_name='__main__', alter_sys=True)")
    cmd = [sys.executable, "-c", launcher, "-n", "2", "--script", str(script), "--"]
    proc = subprocess.Popen(cmd, env=_env(), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    while len(list(tmp_path.glob("pid-*"))) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    pids = [int(p.read_text()) for p in tmp_path.glob("pid-*")]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == launch.INTERRUPTED, err[-3000:]
    assert "interrupted" in err
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.slow  # three processes; the fast tier joins two through `ldpjax run --processes 2`
def test_slurm_tasks_join_through_the_worker(tmp_path):
    # What `srun -n 2 python -m ldpjax_experiments.launch --worker --script ...` gives each task, emulated
    # on this machine (the coordinator pinned to a free port of 127.0.0.1).
    script = tmp_path / "who.py"
    script.write_text(
        "import os, sys, jax\n"
        "from jax.experimental import multihost_utils\n"
        "import numpy as np\n"
        "ids = multihost_utils.process_allgather(np.int32(jax.process_index()))\n"
        f"open(os.path.join({str(tmp_path)!r}, f'who-{{jax.process_index()}}'), 'w').write(\n"
        "    f'{jax.process_count()} {os.environ[\"SLURM_PROCID\"]} {ids.tolist()}')\n"
    )
    port = launch.free_port()
    procs = []
    for task in (0, 1):
        env = _env()
        env.update(SLURM_JOB_ID="77", SLURM_NTASKS="2", SLURM_PROCID=str(task),
                   SLURM_LOCALID=str(task), SLURM_STEP_NODELIST="localhost",
                   LDPJAX_COORDINATOR=f"127.0.0.1:{port}")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "ldpjax_experiments.launch", "--worker", "--script", str(script), "--"],
            env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err[-3000:]
    for task in (0, 1):
        assert (tmp_path / f"who-{task}").read_text() == f"2 {task} [0, 1]"


# --------------------------------------------------------------------------- in-process
@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, (1, 0, None, "single")),
        ({"LDPJAX_NUM_PROCESSES": "1"}, (1, 0, None, "single")),
        ({"LDPJAX_NUM_PROCESSES": "4", "LDPJAX_PROCESS_ID": "3", "LDPJAX_COORDINATOR": "h:1234"},
         (4, 3, "h:1234", "ldpjax")),
        ({"SLURM_NTASKS": "8", "SLURM_PROCID": "5", "SLURM_STEP_NODELIST": "node[01-02]"},
         (8, 5, None, "slurm")),
        ({"SLURM_NTASKS": "8", "SLURM_PROCID": "5", "LDPJAX_COORDINATOR": "n1:9000"},
         (8, 5, "n1:9000", "slurm")),
        ({"SLURM_NTASKS": "1", "SLURM_PROCID": "0"}, (1, 0, None, "single")),
        ({"LDPJAX_DISTRIBUTED": "auto"}, (0, 0, None, "auto")),
        # LDPJAX_* wins over SLURM (the launcher inside an allocation)
        ({"LDPJAX_NUM_PROCESSES": "2", "LDPJAX_PROCESS_ID": "1", "LDPJAX_COORDINATOR": "h:1",
          "SLURM_NTASKS": "8", "SLURM_PROCID": "5", "SLURM_STEP_NODELIST": "n"},
         (2, 1, "h:1", "ldpjax")),
    ],
)
def test_config_from_env(env, expected):
    cfg = cluster.config_from_env(env)
    assert (cfg.num_processes, cfg.process_id, cfg.coordinator, cfg.source) == expected


@pytest.mark.parametrize(
    "env, message",
    [
        ({"LDPJAX_NUM_PROCESSES": "two"}, "LDPJAX_NUM_PROCESSES must be an integer"),
        ({"LDPJAX_NUM_PROCESSES": "0"}, "LDPJAX_NUM_PROCESSES must be >= 1"),
        ({"LDPJAX_NUM_PROCESSES": "2", "LDPJAX_COORDINATOR": "h:1"}, "needs LDPJAX_PROCESS_ID"),
        ({"LDPJAX_NUM_PROCESSES": "2", "LDPJAX_PROCESS_ID": "2", "LDPJAX_COORDINATOR": "h:1"},
         "LDPJAX_PROCESS_ID must be >= 0 and <= 1"),
        ({"LDPJAX_NUM_PROCESSES": "2", "LDPJAX_PROCESS_ID": "0"}, "needs LDPJAX_COORDINATOR"),
        ({"LDPJAX_COORDINATOR": "nohostport"}, "LDPJAX_COORDINATOR must be host:port"),
        ({"SLURM_NTASKS": "4", "SLURM_PROCID": "0"}, "SLURM_STEP_NODELIST is not set"),
        ({"SLURM_NTASKS": "4", "SLURM_PROCID": "4", "SLURM_STEP_NODELIST": "n"},
         "SLURM_PROCID must be >= 0 and <= 3"),
        ({"LDPJAX_DISTRIBUTED": "yes"}, "LDPJAX_DISTRIBUTED must be 'auto'"),
    ],
)
def test_config_from_env_rejects(env, message):
    with pytest.raises(ValueError, match=message):
        cluster.config_from_env(env)


def test_chunk_bytes_round_trip_keeps_every_bit():
    # -0.0, NaN payloads, infinities, bools and 64-bit ints must survive the byte exchange
    f = np.array([[-0.0, np.nan, np.inf], [1e-45, -np.inf, 3.0]], np.float32)
    f.view(np.uint32)[0, 1] = 0x7FC01234  # a NaN with a payload
    b = np.array([[True, False, True], [False, False, True]])
    i = np.array([[2**62, -1, 0], [5, 6, 7]], np.int64)
    specs = [np.zeros((3,), np.float32)[0:0].reshape(0)]  # placeholder, replaced below
    layout = cluster._Layout(((2, 5), (2, 5), (2, 5)),
                                 (np.dtype(np.float32), np.dtype(bool), np.dtype(np.int64)))
    del specs
    row = layout.pack([f, b, i], 3)
    assert row.dtype == np.uint8 and row.size == layout.nbytes == 2 * 5 * (4 + 1 + 8)
    back = layout.unpack(row, 3)
    for original, got in zip([f, b, i], back, strict=True):
        assert got.dtype == original.dtype and got.shape == original.shape
        assert got.tobytes() == original.tobytes()
    with pytest.raises(AssertionError, match="does not match the plan"):
        layout.pack([f.astype(np.float64), b, i], 3)


def test_launcher_argument_checks():
    with pytest.raises(ValueError, match="--processes must be an integer >= 1"):
        launch.launch_local(0, ["list"])
    with pytest.raises(ValueError, match=r"--port must be in \[1, 65535\]"):
        launch.launch_local(2, ["list"], port=70000)
    assert launch.main(["--processes", "0", "--", "list"]) == 2
    with pytest.raises(SystemExit):
        launch.main(["--processes", "2"])  # nothing to run


def test_worker_outputs_of_other_processes_go_to_a_scratch_folder():
    args, scratch = launch._worker_argv(["run", "demo", "--seeds", "5"], 0)
    assert args == ["run", "demo", "--seeds", "5"] and scratch is None
    args, scratch = launch._worker_argv(["run", "demo", "--out", "res"], 1)
    try:
        assert args[:4] == ["run", "demo", "--out", "res"]
        assert args[4:] == ["--out", os.path.join(scratch, "out"), "--no-progress"]
        assert Path(scratch).is_dir()
    finally:
        os.rmdir(scratch)
    assert launch._worker_argv(["list"], 1) == (["list"], None)
    args, scratch = launch._worker_argv(["--plugin", "run", "reproduce", "--seeds", "3"], 2)
    try:  # the plugin file happens to be called "run": the command is "reproduce"
        assert args[-3:] == ["--out", os.path.join(scratch, "out"), "--no-progress"]
    finally:
        os.rmdir(scratch)
    assert launch._worker_argv(["--plugin=x.py", "bench"], 1) == (["--plugin=x.py", "bench"], None)


def test_without_option_strips_processes_for_the_workers():
    assert launch.without_option(["run", "demo", "--processes", "2", "--seeds", "5"]) == [
        "run", "demo", "--seeds", "5"]
    assert launch.without_option(["--plugin", "p.py", "run", "x", "--processes=4"]) == [
        "--plugin", "p.py", "run", "x"]
    assert launch.without_option(["run", "x", "--", "--processes", "2"]) == [
        "run", "x", "--", "--processes", "2"]


def test_local_devices_in_one_process():
    import jax

    assert local_devices(None) == jax.local_devices()
    assert local_devices(jax.devices()[:1]) == jax.devices()[:1]
