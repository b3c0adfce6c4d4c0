"""The engine: keys, chunk/device invariance, recorders, grids, checkpoints and resume."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import (
    Algorithm,
    ChunkOutcome,
    ExecutionHints,
    in_process,
    make_key,
    product_grid,
    record,
    rollout,
    simulate,
)
from ldpjax_experiments.checkpointing import checkpointed
from tests.plugins.schedule import early_start

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "sweep_script.py"
REPO = HERE.parents[1]


class WalkParams(NamedTuple):
    scale: jax.Array
    drift: jax.Array


class WalkState(NamedTuple):
    position: jax.Array
    clock: jax.Array


def _walk_init(params, key):
    return WalkState(jax.random.normal(key, (3,)) * 0.0, jnp.zeros((), jnp.int32))


def _walk_step(params, state, inputs, key):
    push = 0.0 if inputs is None else inputs
    move = params.scale * jax.random.normal(key, (3,)) + params.drift + push
    state = WalkState(state.position + move, state.clock + 1)
    return state, {"position": state.position, "norm": jnp.sum(state.position**2)}


WALK = Algorithm(_walk_init, _walk_step)
INPUTS = jnp.linspace(0.0, 1.0, 40)[:, None] * jnp.ones((1, 3))


def test_rollout_equals_simulate_seed_and_record_invariants():
    params = WalkParams(jnp.float32(1.0), jnp.float32(0.1))
    rec = record.combine(
        last=record.last(lambda o: o["position"]),
        total=record.total(lambda o: o["norm"]),
        mean=record.mean(lambda o: o["norm"]),
        steps=record.every_step(lambda o: o["norm"]),
        marks=record.at_steps([1, 10, 40], lambda o: o["norm"], cumulative=True),
        values=record.at_steps([5, 40], lambda o: o["norm"]),
    )
    res = simulate(WALK, params, make_key(0), inputs=INPUTS, num_seeds=5, record=rec)
    steps = res.record["steps"]
    assert steps.shape == (5, 40)
    np.testing.assert_allclose(res.record["total"], steps.sum(-1), rtol=1e-5)
    np.testing.assert_allclose(res.record["mean"], steps.mean(-1), rtol=1e-5)
    np.testing.assert_allclose(res.record["marks"], np.cumsum(steps, -1)[:, [0, 9, 39]], rtol=1e-5)
    np.testing.assert_array_equal(res.record["values"], steps[:, [4, 39]])
    np.testing.assert_array_equal(res.record["last"], res.state.position)
    np.testing.assert_array_equal(res.state.clock, 40)
    for s in (0, 3):
        state, one = jax.jit(lambda k, s=s: rollout(WALK, params, k, inputs=INPUTS, record=rec, seed_index=s))(make_key(0))
        chex.assert_trees_all_close(one, jax.tree_util.tree_map(lambda x, s=s: x[s], res.record), rtol=1e-6)


def test_results_do_not_depend_on_chunking():
    params = product_grid(WalkParams(jnp.float32(1.0), jnp.float32(0.0)), scale=[0.5, 1.0, 2.0])
    kw = dict(inputs=INPUTS, num_seeds=10, grid_ndim=1, record=record.every_step(lambda o: o["norm"]))
    base = simulate(WALK, params, make_key(1), **kw)
    for seed_chunk, time_chunk in [(3, None), (4, 13)]:
        other = simulate(WALK, params, make_key(1), seed_chunk=seed_chunk, time_chunk=time_chunk, **kw)
        np.testing.assert_array_equal(base.record, other.record)
    # seed_offset continues the same stream of seeds
    tail = simulate(WALK, params, make_key(1), seed_offset=6, **{**kw, "num_seeds": 4})
    np.testing.assert_array_equal(base.record[:, 6:], tail.record)
    # common random numbers: with drift 0 and zero inputs the paths scale with `scale`
    zero = simulate(WALK, params, make_key(1), num_steps=5, num_seeds=2, grid_ndim=1,
                    record=record.last(lambda o: o["position"]))
    np.testing.assert_allclose(zero.record[2], 4 * zero.record[0], rtol=1e-5)


def test_scan_unroll_keeps_every_record_and_is_checked():
    """``ExecutionHints.scan_unroll`` runs several steps per trip of the compiled loop: the same
    steps with the same keys, so the records equal ``scan_unroll=1``'s up to the last bits of
    float arithmetic (XLA may contract a multiply-add in the unrolled body and not in the
    rolled one), also with time chunks that are not a multiple of it, in ``simulate`` and in
    ``rollout``; a value that is not an int >= 1 is refused when the record is built, and
    ``simulate`` refuses hints that are not an ``ExecutionHints``."""
    params = product_grid(WalkParams(jnp.float32(1.0), jnp.float32(0.1)), scale=[0.5, 2.0])
    kw = dict(inputs=INPUTS, num_seeds=3, grid_ndim=1,
              record=record.combine(steps=record.every_step(lambda o: o["norm"]),
                                    last=record.last(lambda o: o["position"])))
    base = simulate(WALK, params, make_key(2), **kw)
    for unroll, time_chunk in [(2, None), (3, 13)]:
        other = simulate(WALK, params, make_key(2), time_chunk=time_chunk,
                         hints=ExecutionHints(scan_unroll=unroll), **kw)
        # norms up to ~1e2 after 40 float32 steps: an ulp of rounding per step moves them by
        # ~40 * 2^-23 relative at most, far below 1e-5
        chex.assert_trees_all_close(base.record, other.record, rtol=1e-5, atol=0)
    point = jax.tree_util.tree_map(lambda x: x[1], params)
    one = rollout(WALK, point, make_key(2), inputs=INPUTS, seed_index=1, record=kw["record"])[1]
    unrolled = rollout(WALK, point, make_key(2), inputs=INPUTS, seed_index=1, record=kw["record"],
                       hints=ExecutionHints(scan_unroll=3))[1]
    chex.assert_trees_all_close(one, unrolled, rtol=1e-5, atol=0)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="scan_unroll must be an integer >= 1"):
            ExecutionHints(scan_unroll=bad)
    with pytest.raises(TypeError, match="hints must be an ldpjax.engine.ExecutionHints"):
        simulate(WALK, params, make_key(2), hints={"scan_unroll": 2}, **kw)


def test_algorithm_is_a_contract_of_four_fields():
    """How a run executes is not part of the contract: the three speed hints live on
    ``ExecutionHints`` only (one home per name), checked when the record is built."""
    assert Algorithm._fields == ("init", "step", "validate", "privacy_event")
    names = [f.name for f in dataclasses.fields(ExecutionHints)]
    assert names == ["grid_major", "scan_unroll", "cpu_compiler_options"]
    assert ExecutionHints() == ExecutionHints(False, 1, ())
    assert hash(ExecutionHints(cpu_compiler_options=[("a", 1)])) == hash(
        ExecutionHints(cpu_compiler_options=(("a", 1),)))
    with pytest.raises(ValueError, match="grid_major must be a bool"):
        ExecutionHints(grid_major=1)
    with pytest.raises(ValueError, match=r"\(name, value\) pairs"):
        ExecutionHints(cpu_compiler_options=("xla_cpu_use_fusion_emitters", False))


def test_independent_streams_per_grid_point():
    # identical parameters at every grid point: with common random numbers the runs coincide,
    # with independent streams they differ -- and stay chunk-invariant.
    params = WalkParams(jnp.ones(3), jnp.zeros(3))
    kw = dict(num_seeds=6, grid_ndim=1, record=record.last(lambda o: o["position"]))
    crn = simulate(WALK, params, make_key(4), 5, **kw)
    np.testing.assert_array_equal(crn.record[0], crn.record[2])
    ind = simulate(WALK, params, make_key(4), 5, common_random_numbers=False, **kw)
    assert not np.allclose(ind.record[0], ind.record[2])
    chunked = simulate(WALK, params, make_key(4), 5, common_random_numbers=False, seed_chunk=4,
                       time_chunk=2, **kw)
    np.testing.assert_array_equal(ind.record, chunked.record)


def test_grid_shapes_product_and_validation():
    params = product_grid(WalkParams(jnp.float32(1.0), jnp.float32(0.0)), scale=[1.0, 2.0], drift=[0.0, 0.1, 0.2])
    assert params.scale.shape == (2, 3) and params.drift.shape == (2, 3)
    np.testing.assert_allclose(params.drift[1], [0.0, 0.1, 0.2], rtol=1e-6)
    res = simulate(WALK, params, make_key(2), 6, num_seeds=4, grid_ndim=2,
                   record=record.last(lambda o: o["position"]))
    assert res.record.shape == (2, 3, 4, 3)
    with pytest.raises(ValueError, match="grid axes"):
        simulate(WALK, WalkParams(jnp.ones(2), jnp.ones(3)), make_key(0), 3, grid_ndim=1)
    with pytest.raises(ValueError, match="not a field"):
        product_grid(WalkParams(1.0, 0.0), nope=[1])
    with pytest.raises(ValueError, match="num_seeds"):
        simulate(WALK, WalkParams(1.0, 0.0), make_key(0), 3, num_seeds=0)
    with pytest.raises(ValueError, match="num_steps"):
        simulate(WALK, WalkParams(1.0, 0.0), make_key(0))
    with pytest.raises(ValueError, match="steps must be"):
        record.at_steps([3, 2])


def test_algorithm_type_and_key_checks():
    with pytest.raises(TypeError):
        simulate((_walk_init, _walk_step), WalkParams(1.0, 0.0), make_key(0), 3)
    with pytest.raises(ValueError, match="key_impl"):
        make_key(0, "mersenne")
    with pytest.raises(ValueError, match="seed"):
        make_key(-1)
    legacy = jax.random.PRNGKey(0)
    a = simulate(WALK, WalkParams(1.0, 0.0), legacy, 3, record=record.last(lambda o: o["norm"]))
    # a legacy uint32 key is a threefry2x32 key (make_key's default is philox4x32)
    b = simulate(WALK, WalkParams(1.0, 0.0), make_key(0, "threefry2x32"), 3,
                 record=record.last(lambda o: o["norm"]))
    np.testing.assert_array_equal(a.record, b.record)


def test_rbg_keys_run():
    res = simulate(WALK, WalkParams(1.0, 0.0), make_key(0, "rbg"), 50, num_seeds=64,
                   record=record.last("position"))
    assert res.info["rng"] == "rbg"
    # position after 50 steps ~ N(0, 50) per coordinate, 64 x 3 = 192 draws: sd of the sample
    # variance ratio sqrt(2/192) = 0.10; 5 sd
    assert abs(res.record.var() / 50 - 1) < 5 * np.sqrt(2 / 192)


def test_checkpoint_reuse_and_corruption_detection(tmp_path):
    params = product_grid(WalkParams(jnp.float32(1.0), jnp.float32(0.0)), scale=[0.5, 1.0])
    kw = dict(num_seeds=12, seed_chunk=4, grid_ndim=1, record=record.total("norm"),
              runner=checkpointed(tmp_path))
    first = simulate(WALK, params, make_key(5), 30, **kw)
    assert (first.info["chunks_computed"], first.info["chunks_loaded"]) == (3, 0)
    again = simulate(WALK, params, make_key(5), 30, **kw)
    assert (again.info["chunks_computed"], again.info["chunks_loaded"]) == (0, 3)
    np.testing.assert_array_equal(first.record, again.record)
    chex.assert_trees_all_equal(first.state, again.state)

    files = sorted(Path(tmp_path).glob("*/chunk-*.npz"))
    assert len(files) == 3
    data = files[0].read_bytes()
    files[0].write_bytes(data[: len(data) // 2])  # truncated (incomplete write)
    raw = bytearray(files[1].read_bytes())
    with np.load(files[1]) as data:
        leaf = data["leaf_0000"].tobytes()
    # flipped bits inside an array's data (the file's middle byte may be a zip header field
    # that readers ignore: in x64 it falls in a ZIP64 size placeholder and went unnoticed)
    raw[bytes(raw).index(leaf) + len(leaf) // 2] ^= 0xFF
    files[1].write_bytes(bytes(raw))
    (files[2].parent / (files[2].name + ".tmp-999")).write_bytes(b"partial")
    with pytest.warns(RuntimeWarning, match="invalid chunk"):
        repaired = simulate(WALK, params, make_key(5), 30, **kw)
    assert (repaired.info["chunks_computed"], repaired.info["chunks_loaded"]) == (2, 1)
    np.testing.assert_array_equal(first.record, repaired.record)
    assert not list(Path(tmp_path).glob("*/*.tmp-*"))

    # a different configuration never reuses these chunks
    other = simulate(WALK, params, make_key(6), 30, **kw)
    assert other.info["chunks_loaded"] == 0


def test_a_runner_decides_where_chunks_come_from_and_the_records_stay_bit_identical():
    """The seam: a runner may replan the chunks (as processes agreeing on a seed chunk do) and
    the records are those of the default runner, bit for bit; an outcome that is not this
    sweep's (a missing chunk, other dtypes, another call's work) is refused, never merged."""
    params = product_grid(WalkParams(jnp.float32(1.0), jnp.float32(0.0)), scale=[0.5, 1.0])
    kw = dict(num_seeds=10, seed_chunk=4, grid_ndim=1, record=record.total("norm"))
    ref = simulate(WALK, params, make_key(5), 12, **kw)
    seen, told = [], []

    def replanning(work):
        seen.append(work)
        work = work.with_seed_chunk(3)
        pieces = [work.compute(first, stop) for first, stop in work.chunks]
        return ChunkOutcome(work, pieces, len(pieces), 0, "a fingerprint")

    got = simulate(WALK, params, make_key(5), 12, runner=replanning, progress=told.append, **kw)
    (work,) = seen
    assert (work.seed_chunk, work.chunks, work.seed_chunk_chosen) == (4, ((0, 4), (4, 8), (8, 10)),
                                                                      True)
    assert {"algorithm", "recorder", "params", "key", "num_steps"} <= set(work.description)
    assert (got.info.seed_chunk, got.info.chunks_computed, got.info.fingerprint) == (
        3, 4, "a fingerprint")
    assert told == []  # compute(first, stop) without a callback tells nothing
    np.testing.assert_array_equal(got.record, ref.record)
    chex.assert_trees_all_equal(got.state, ref.state)

    def missing_chunk(work):
        return ChunkOutcome(work, [work.compute(*work.chunks[0])], 1, 0)

    def other_dtype(work):
        out = in_process(work)
        return out._replace(pieces=[[x.astype(np.float64) for x in p] for p in out.pieces])

    def foreign(work):
        return in_process(seen[0])

    for runner, message in [(missing_chunk, "1 pieces for 3 seed chunks"),
                            (other_dtype, r"seeds \[0, 4\) with leaves"),
                            (foreign, "the work it was given")]:
        with pytest.raises(ValueError, match=message):
            simulate(WALK, params, make_key(5), 12, runner=runner, **kw)
    with pytest.raises(TypeError, match="ChunkOutcome"):
        simulate(WALK, params, make_key(5), 12, runner=lambda w: tuple(in_process(w)), **kw)
    with pytest.raises(TypeError, match="runner must be a callable"):
        simulate(WALK, params, make_key(5), 12, runner="chunks/", **kw)


def test_the_checkpointing_runner_refuses_a_secure_key_sweep(tmp_path):
    """``simulate`` never hands a secure key to a runner (test_engine_rng); the checkpointing
    runner refuses one by itself too, before it touches the folder."""
    works = []
    simulate(WALK, WalkParams(jnp.float32(1.0), jnp.float32(0.0)), make_key(0), 3,
             runner=lambda w: works.append(w) or in_process(w))
    secure = dataclasses.replace(
        works[0], description={**works[0].description, "key": "0f:ldpjax_secure128"})
    with pytest.raises(ValueError, match="never runs a secure key"):
        checkpointed(tmp_path / "chunks")(secure)
    assert not any(tmp_path.iterdir())
    assert checkpointed(tmp_path / "chunks")(works[0]).computed == 1  # a seeded key is saved


def test_checkpoint_sha256_rejects_a_consistently_rewritten_chunk(tmp_path):
    """A chunk rewritten as a valid archive with the original metadata but one changed leaf
    passes the zip CRC and every shape/dtype check: only the SHA-256 comparison rejects it."""
    params = WalkParams(jnp.float32(1.0), jnp.float32(0.0))
    kw = dict(num_seeds=3, record=record.total("norm"), runner=checkpointed(tmp_path))
    first = simulate(WALK, params, make_key(5), 10, **kw)
    (path,) = Path(tmp_path).glob("*/chunk-*.npz")
    with np.load(path) as data:
        arrays = {name: np.array(data[name]) for name in data.files}
    arrays["leaf_0000"] = arrays["leaf_0000"].copy()
    arrays["leaf_0000"].flat[0] += 1
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    with np.load(path) as data:  # still a readable archive with the original metadata
        assert bytes(data["meta"]) == bytes(arrays["meta"])
        assert not np.array_equal(data["leaf_0000"], first.record)
    with pytest.warns(RuntimeWarning, match="checksum mismatch"):
        again = simulate(WALK, params, make_key(5), 10, **kw)
    assert (again.info["chunks_computed"], again.info["chunks_loaded"]) == (1, 0)
    np.testing.assert_array_equal(again.record, first.record)


def _env(**extra):
    env = dict(os.environ)
    env.update(extra)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _device_run(mode: str, out: Path) -> subprocess.Popen:
    """``sweep_script.py MODE OUT`` on 4 CPU devices, started (not waited for)."""
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), mode, str(out)],
        env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu"),
    )


START_EARLY_FOR = ("test_four_devices_bit_identical_to_one_device_and_any_chunk",)


def start_early(folder: Path) -> tuple[subprocess.Popen, Path]:
    """The fast suite's 4-device sweep, started when the session starts (tests/plugins/schedule.py)."""
    out = folder / "devices.npz"
    return _device_run("devices", out), out


def _check_device_runs(tmp_path, mode, started=None):
    """Run ``sweep_script.py MODE`` on 4 devices (or wait for the ``started`` one); every
    chunking and device count gives the one-device, one-chunk records bit for bit, for each
    generator of the mode."""
    proc, out = started if started is not None else (
        _device_run(mode, tmp_path / "devices.npz"), tmp_path / "devices.npz")
    try:
        code = proc.wait(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, f"sweep_script.py {mode} exited {code}"
    got = np.load(out)
    from ldpjax.engine.keys import INVARIANT_DEFAULT, UNSHARDABLE_IMPLS

    sys.path.insert(0, str(HERE))
    try:
        import sweep_script
    finally:
        sys.path.remove(str(HERE))

    default_execution = "per_device" if INVARIANT_DEFAULT in UNSHARDABLE_IMPLS else "sharded"
    generators = [("", INVARIANT_DEFAULT, default_execution),
                  ("threefry2x32_", "threefry2x32", "sharded")]
    if mode == "devices_all":
        generators.append(("fast_", "philox2x32", "per_device"))
    for tag, rng, execution in generators:
        assert int(got[tag + "four_devices_even_devices"]) == 4
        assert str(got[tag + "four_devices_even_execution"]) == execution
        assert str(got[tag + "four_devices_even_rng"]) == rng
        assert int(got[tag + "one_device_whole_devices"]) == 1
        # "devices" (fast) runs the default generator's uneven split without time chunks
        time_chunk = 0 if (mode, tag) == ("devices", "") else 20
        assert int(got[tag + "four_devices_uneven_time_chunk"]) == time_chunk
        reference = got[tag + "one_device_whole_last"]
        assert reference.shape == (4, sweep_script.NUM_SEEDS)
        for name in ("four_devices_even", "four_devices_uneven", "one_device_chunk7"):
            np.testing.assert_array_equal(got[tag + name + "_last"], reference)
            np.testing.assert_array_equal(got[tag + name + "_total"], got[tag + "one_device_whole_total"])
    # two generators give different streams
    other = "fast_" if mode == "devices_all" else "threefry2x32_"
    assert not np.array_equal(got[other + "one_device_whole_last"], got["one_device_whole_last"])
    # and the same numbers in this (single-device) process
    here = sweep_script.counter_sweep(jax.devices()[:1], None)
    np.testing.assert_array_equal(here.record["last"], got["one_device_whole_last"])


def test_four_devices_bit_identical_to_one_device_and_any_chunk(tmp_path, tmp_path_factory):
    """The default generator (run device by device) and threefry (one sharded program)."""
    _check_device_runs(tmp_path, "devices", early_start(__name__, tmp_path_factory))


@pytest.mark.slow
def test_four_devices_bit_identical_for_every_generator(tmp_path):
    """The same with rng="fast" (philox2x32) as well."""
    _check_device_runs(tmp_path, "devices_all")


@pytest.mark.slow
def test_float64_bit_identical_across_devices_and_chunks(tmp_path):
    """Under x64, a step that reduces over 1000 draws gives the same bits on 1 and 4 devices."""
    out = tmp_path / "x64.npz"
    subprocess.run(
        [sys.executable, str(SCRIPT), "x64", str(out)],
        env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu"),
        check=True, timeout=900,
    )
    got = np.load(out)
    tag = "threefry2x32_"  # a generator that runs as one sharded program (see sweep_script)
    assert str(got[tag + "four_devices_even_execution"]) == "sharded"
    reference = got[tag + "one_device_whole_last"]
    assert reference.dtype == np.float64
    for name in ("four_devices_even", "four_devices_uneven", "one_device_chunk7"):
        np.testing.assert_array_equal(got[tag + name + "_last"], reference)
        np.testing.assert_array_equal(got[tag + name + "_total"], got[tag + "one_device_whole_total"])


def test_interrupted_sweep_resumes_without_recomputing(tmp_path):
    """A sweep SIGKILLed mid-chunk (by itself, after two chunks were saved: no timing race)
    resumes in a new process (this one) from its checkpoints, computing only the rest, and
    gives the records of an uninterrupted sweep (same shapes: one compilation here)."""
    sys.path.insert(0, str(HERE))
    try:
        import sweep_script
    finally:
        sys.path.remove(str(HERE))
    ckpt = tmp_path / "ckpt"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "slow", str(tmp_path / "killed.npz"), str(ckpt)],
        env=_env(JAX_PLATFORMS="cpu"), timeout=900,
    )
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    assert not (tmp_path / "killed.npz").exists()
    done_at_kill = len(list(ckpt.glob("*/chunk-*.npz")))
    assert done_at_kill == sweep_script.KILL_AT

    resumed = sweep_script.slow_sweep(ckpt)
    assert resumed.info["chunks_loaded"] == done_at_kill
    assert resumed.info["chunks_computed"] == sweep_script.SLOW_CHUNKS - done_at_kill
    fresh = sweep_script.slow_sweep(tmp_path / "fresh")
    assert fresh.info["chunks_computed"] == sweep_script.SLOW_CHUNKS
    np.testing.assert_array_equal(resumed.record, fresh.record)


def test_run_specs_from_abstract_params_equal_the_concrete_probe():
    """The engine probes one run's shapes from abstract params (``run_params_spec``: no eager
    slicing op per leaf); the specs equal those of the first run's concrete params, weak
    types included (a Python-float leaf stays weakly typed, an int32 leaf keeps its dtype)."""
    import importlib

    rollout_mod = importlib.import_module("ldpjax.engine.rollout")  # the module

    class Mixed(NamedTuple):
        scale: jax.Array
        drift: jax.Array
        steps: jax.Array

    def init(params, key):
        return WalkState(jnp.zeros((3,)) + params.scale * 0.0, params.steps * 0)

    def step(params, state, inputs, key):
        moved = state.position + params.drift + inputs
        return WalkState(moved, state.clock + params.steps), {"total": moved.sum() * params.scale}

    algorithm = Algorithm(init, step)
    params_flat = Mixed(jnp.broadcast_to(jnp.asarray(1.5), (2,)),
                        jnp.full((2, 3), 0.5, jnp.float32), jnp.asarray([1, 2], jnp.int32))
    assert params_flat.scale.weak_type and not params_flat.drift.weak_type
    abstract = rollout_mod.run_params_spec(params_flat)
    assert all(isinstance(x, jax.ShapeDtypeStruct) for x in jax.tree_util.tree_leaves(abstract))
    assert abstract.scale.weak_type and abstract.steps.dtype == jnp.int32
    recorder = record.total(lambda o: o["total"])
    key, inputs0 = make_key(0), INPUTS[0]
    rollout_mod._specs_cached.cache_clear()
    from_spec = rollout_mod.run_specs(algorithm, recorder, 40, abstract, key, inputs0)
    rollout_mod._specs_cached.cache_clear()
    concrete = jax.tree_util.tree_map(lambda x: x[0], params_flat)
    from_values = rollout_mod.run_specs(algorithm, recorder, 40, concrete, key, inputs0)
    assert jax.tree_util.tree_structure(from_spec) == jax.tree_util.tree_structure(from_values)
    for a, b in zip(jax.tree_util.tree_leaves(from_spec), jax.tree_util.tree_leaves(from_values),
                    strict=True):
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)


def test_run_specs_follow_the_x64_mode():
    """A run's cached shapes are keyed by the x64 mode too: the same int32 params give a
    float32 state without x64 and a float64 one with it (the algorithm's own zeros)."""
    import importlib

    rollout_mod = importlib.import_module("ldpjax.engine.rollout")

    def init(params, key):
        return jnp.zeros((2,)) + params  # float32 or float64 with the mode

    def step(params, state, inputs, key):
        return state + 1.0, {"state": state}

    algorithm = Algorithm(init, step)
    params, key = jnp.asarray(3, jnp.int32), make_key(0)
    dtypes = []
    for enabled in (False, True, False):
        with jax.enable_x64(enabled):
            state_spec = rollout_mod.run_specs(algorithm, record.last(), 5, params, key, None)[0]
            dtypes.append(state_spec.dtype)
    assert dtypes == [jnp.float32, jnp.float64, jnp.float32]
