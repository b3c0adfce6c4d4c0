"""``ldpjax bench``: JSON records, agreement of the two sides, the NumPy references' closed forms.

Statistical tolerances: a mean of R iid values is checked within 3 standard errors (sd /
sqrt(R), with the theory sd where one exists), i.e. a false alarm probability of 0.27% per
check at the fixed seeds used here.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import softmax
from scipy.stats import norm

from ldpjax_experiments import bench
from ldpjax_experiments.bench import numpy_reference as ref
from ldpjax_experiments.bench import rng as rng_lib
from ldpjax_experiments.bench.authors_loop import local_sgd_loop
from ldpjax_experiments.bench.plan import captured_call, plan_workload
from ldpjax_experiments.bench.workloads import DEFAULT_WORKLOADS, WORKLOADS


# --------------------------------------------------------------------------- CLI and records
def test_cli_writes_json_records_with_the_required_keys(tmp_path, capsys):
    path = tmp_path / "bench.json"
    code = bench.main(["--size", "tiny", "--only", "agarwal-singh", "--repeats", "3",
                       "--rng-sizes", "14", "--json", str(path)])
    records = json.loads(path.read_text())
    assert [r["workload"] for r in records] == ["agarwal-singh"]
    for r in records:
        assert set(bench.RECORD_KEYS) <= set(r)
        assert r["mode"] == "default"
        assert r["numpy_seconds"] > 0 and r["ldpjax_seconds"] > 0 and r["compile_seconds"] >= 0
        assert r["speedup"] == pytest.approx(r["numpy_seconds"] / r["ldpjax_seconds"])
        # the reported times are the medians of the repeats; the best ones are recorded too
        assert r["time_statistic"] == "median" and r["repeats"] == 3
        assert len(r["ldpjax_times"]) == len(r["numpy_times"]) == 3
        assert r["ldpjax_seconds"] == sorted(r["ldpjax_times"])[1]
        assert r["numpy_seconds"] == sorted(r["numpy_times"])[1]
        assert r["ldpjax_best_seconds"] == min(r["ldpjax_times"])
        assert r["numpy_best_seconds"] == min(r["numpy_times"])
        assert r["rng_floor_seconds"] == pytest.approx(
            r["random_words"] / r["rng_fastest_words_per_second"])
        assert r["agree"], r
    assert code == 0
    out = capsys.readouterr().out
    assert "RNG rates" in out and "agarwal-singh" in out and "agree" in out


def test_cli_rejects_unknown_workloads_and_rng(capsys):
    assert bench.main(["--only", "nope"]) == 2
    assert bench.main(["--rng", "not-a-generator"]) == 2
    assert bench.main(["--rng-sizes", "40"]) == 2
    err = capsys.readouterr().err
    assert "only must name workloads" in err and "rng must be" in err and "rng-sizes" in err


def test_resolve_names():
    assert bench.resolve_names(None) == list(DEFAULT_WORKLOADS)
    assert set(DEFAULT_WORKLOADS) == {
        "quantile", "bandits", "rw-ftpl", "rw-adabatch", "rw-meta", "agarwal-singh"}
    assert bench.resolve_names("bandits, quantile") == ["bandits", "quantile"]
    with pytest.raises(ValueError, match="only"):
        bench.resolve_names("bandits,zzz")


def test_rng_rates_are_measured_for_the_available_generators():
    impls = rng_lib.available_impls()
    assert "threefry2x32" in impls
    rates = rng_lib.measure_rates(["threefry2x32"], sizes=(2**14,), repeats=1)
    assert rates[0].error is None and rates[0].rate > 0
    assert rng_lib.fastest(rates).impl == "threefry2x32"


def test_sides_agree_tiny():
    record = bench.run_workload("quantile", "tiny", repeats=1, fastest_rate=1e8, fastest_impl="x")
    assert record["agree"], record
    assert record["random_words"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_workload_agrees_tiny(name):
    record = bench.run_workload(name, "tiny", repeats=1)
    assert record["agree"], record


# --------------------------------------------------------------------------- NumPy references
def test_local_sgd_reference_matches_theorem_3_1():
    """Hete-L (K = 10, r = 0.25..0.9, tau = 0.3): mean near Q*, sd near Theorem 3.1's."""
    k, tau, budget, reps = 10, 0.3, 2000, 400
    loc, r, w = np.linspace(-1, 1, k), np.linspace(0.25, 0.9, k), np.full(k, 1 / k)
    q_star = brentq(lambda q: np.sum(w * norm.cdf(q - loc)) - tau, -5, 5)
    f = np.sum(w * norm.pdf(q_star - loc))
    big_f = norm.cdf(q_star - loc)
    sd = math.sqrt(np.sum(w**2 * (1 / r**2 - (2 * big_f - 1) ** 2)) / (4 * f**2) / budget)
    est, var = ref.local_sgd(np.random.default_rng(0), tau, r, loc, w, (1,) * budget, reps)
    assert abs(est.mean() - q_star) <= 3 * sd / math.sqrt(reps)
    # sd of an sd estimate from R normal draws: sd / sqrt(2R) (3.5% here); 3 of those plus
    # 5% for the finite-t_T distance from the asymptotic law.
    assert abs(est.std() / sd - 1) <= 3 / math.sqrt(2 * reps) + 0.05
    assert np.all(var > 0)


def test_epsilon_greedy_reference_uniform_play_regret():
    """gamma = 0 (constant): eps = 1, uniform play: regret T * gap / 2, variance T gap^2 / 4."""
    ctr, horizon, runs = np.array([0.324, 0.295]), 500, 400
    regret = ref.epsilon_greedy(np.random.default_rng(1), ctr, np.zeros(runs, int),
                                np.zeros(runs), horizon)
    gap = ctr[0] - ctr[1]
    se = math.sqrt(horizon * gap**2 / 4 / runs)
    assert abs(regret.mean() - horizon * gap / 2) <= 3 * se
    assert regret.std() == pytest.approx(math.sqrt(horizon) * gap / 2, rel=0.15)


def test_rw_ftpl_reference_regret_within_bound_and_grows_with_noise():
    """E[regret] <= (eta + 2/eta) sqrt(2 T log n); more noise (smaller mu) -> more regret."""
    rng = np.random.default_rng(2)
    n, runs = 10, 200
    gains = (rng.random((400, n)) < np.where(np.arange(n) == 0, 0.6, 0.5)).astype(float)
    best = gains.sum(0).max()
    for horizon in (100, 400):
        g = gains[:horizon]
        for mu in (0.5, 2.0):
            eta = math.sqrt(n) / mu
            regret = g.sum(0).max() - ref.rw_ftpl(rng, g, np.full(runs, eta))
            bound = (eta + 2 / eta) * math.sqrt(2 * horizon * math.log(n))
            assert regret.mean() <= bound
    low = best - ref.rw_ftpl(rng, gains, np.full(runs, math.sqrt(n) / 0.25))
    high = best - ref.rw_ftpl(rng, gains, np.full(runs, math.sqrt(n) / 4.0))
    se = math.hypot(low.std(), high.std()) / math.sqrt(runs)
    assert low.mean() - high.mean() > 3 * se


def test_compute_delay_reference_is_the_largest_admissible_batch():
    rng = np.random.default_rng(3)
    n, alpha, eta = 10, 0.01, 3.0
    gaps = np.concatenate([[0.0], rng.exponential(20.0, 50), [500.0]])
    t = 50
    batch = ref.compute_delay(gaps, t, eta, n, alpha)

    def admissible(b):
        beta = gaps / (eta * np.sqrt(2 * b)) - math.sqrt(math.log(2 * n - 2))
        return ref.leader_change_bound(beta) <= alpha * np.sqrt(math.log(n) / (t + b))

    b = batch.astype(float)
    assert np.all(batch >= 1)
    assert np.all(admissible(b) | (batch == 1))
    assert not np.any(admissible(b + 1))
    assert batch[0] == 1 and batch[-1] > 100  # tied leaders never batch; a huge gap does


def test_tree_hedge_reference_without_noise_is_hedge():
    """node_sd = 0: the tree's prefix sums are exact, so the play is softmax(lambda G_{t-1})."""
    rng = np.random.default_rng(4)
    horizon, n, lam = 37, 5, 0.7
    gains = rng.random((horizon, n))
    earned = ref.tree_hedge(rng, gains, np.zeros(3), np.full(3, lam))
    prefix = np.vstack([np.zeros(n), np.cumsum(gains, 0)[:-1]])
    expected = np.sum(softmax(lam * prefix, axis=1) * gains)
    np.testing.assert_allclose(earned, expected, rtol=1e-10)


def test_tree_hedge_reference_zero_rate_plays_uniformly_whatever_the_noise():
    rng = np.random.default_rng(5)
    gains = rng.random((20, 4))
    earned = ref.tree_hedge(rng, gains, np.full(4, 3.0), np.full(4, 1e-12))
    np.testing.assert_allclose(earned, gains.mean(1).sum(), rtol=1e-9)


# --------------------------------------------------------------------------- authors' loop
def test_authors_loop_agrees_with_ldpjax_and_tells_a_wrong_level_apart():
    """The per-sample loop estimates the same cell as ldpjax (tiny: 40 of 200 replications).

    Tolerance: each side's statistic is a mean of independent replications, so its standard
    error is sd / sqrt(R) (R = 200 ldpjax, 40 loop); the two sides are independent, so under
    "same law" diff / sqrt(se_1^2 + se_2^2) is approximately N(0, 1) and |diff| <= 3 combined
    se fails with probability 0.27% (fixed seeds: deterministic). The same loop at tau = 0.5
    (another quantile, ~0.5 away at t_T = 200) must fail that check, so the check has power.
    """
    record = bench.run_workload("quantile-authors-loop", "tiny", repeats=1, fastest_rate=1e8,
                                fastest_impl="x")
    assert record["agree"], record
    assert record["baseline"] == "authors-loop" and record["numpy_scale"] == 200 / 40
    assert record["numpy_seconds"] == pytest.approx(5 * record["numpy_measured_seconds"])
    assert record["speedup"] == pytest.approx(record["numpy_seconds"] / record["ldpjax_seconds"])
    k = 10
    local_steps = WORKLOADS["quantile"].sizes["tiny"]["budget"] * (1,)
    wrong, _ = local_sgd_loop(np.random.default_rng(0), 0.5, np.linspace(0.25, 0.9, k),
                              np.linspace(-1, 1, k), np.full(k, 1 / k), local_steps, 40)
    combined = math.hypot(record["ldpjax_se"], wrong.std(ddof=1) / math.sqrt(wrong.size))
    assert abs(wrong.mean() - record["ldpjax_stat"]) > 3 * combined


def test_authors_loop_rejects_bad_settings():
    with pytest.raises(ValueError, match="tau"):
        local_sgd_loop(np.random.default_rng(0), 1.5, [0.5], [0.0], [1.0], (1,), 1)
    with pytest.raises(ValueError, match="reps"):
        local_sgd_loop(np.random.default_rng(0), 0.5, [0.5], [0.0], [1.0], (1,), 0)


# --------------------------------------------------------------------------- x64
@pytest.mark.parametrize("name", ["quantile", pytest.param("rw-meta", marks=pytest.mark.slow)])
def test_x64_workloads_hand_float64_to_ldpjax(name):
    """Under jax_enable_x64 the ldpjax side gets float64 params and inputs (the NumPy side is
    float64 always), and an exact float64 uniform costs two 32-bit words."""
    from ldpjax_experiments.bench.workload import words_per_float

    with jax.enable_x64(True):
        call = captured_call(name, "tiny")
        leaves = jax.tree_util.tree_leaves((call["params"], call.get("inputs")))
        assert {str(x.dtype) for x in leaves if jnp.issubdtype(x.dtype, jnp.floating)} == {
            "float64"}
        assert words_per_float() == 2
    assert words_per_float() == 1


@pytest.mark.slow
def test_x64_run_agrees_and_says_so():
    with jax.enable_x64(True):
        record = bench.run_workload("quantile", "tiny", repeats=1, fastest_rate=1e8,
                                    fastest_impl="x")
    assert record["x64"] and record["agree"], record
    assert record["random_words"] == 2 * 10 * 200 * 200  # two words per float64 uniform
    assert not jax.config.jax_enable_x64


# --------------------------------------------------------------------------- plan / GPU check
def test_plan_cli_lowers_tiny_kernels_and_reports_bytes(tmp_path, capsys):
    path = tmp_path / "plan.json"
    code = bench.main(["--plan", "--lower-only", "--size", "tiny", "--only", "quantile",
                       "--x64", "--json", str(path)])
    assert code == 0
    (plan,) = json.loads(path.read_text())
    assert plan["x64"] and plan["fits"] and plan["seeds"] == 200 and plan["steps"] == 200
    assert plan["batch"] % plan["num_devices"] == 0 and plan["batch"] >= 200
    assert plan["chunk_bytes_per_device"] == plan["batch"] * plan["per_run_bytes"] // plan[
        "num_devices"]
    assert [k.split(":")[0] for k in plan["kernels"]] == ["init", "advance", "finalize"]
    assert "plan MiB/dev" in capsys.readouterr().out
    assert not jax.config.jax_enable_x64
    assert bench.main(["--plan", "--device-gb", "0"]) == 2


def test_plan_says_when_a_chunk_does_not_fit():
    """A device too small for one seed's runs: the engine's planner refuses (a ValueError)."""
    with pytest.raises(ValueError, match="memory"):
        plan_workload("quantile", "tiny", device_bytes=1000, compile=False)


@pytest.mark.slow
def test_plan_shards_over_four_cpu_devices(tmp_path):
    """With 4 host devices and a shardable generator the kernels compile as one SPMD program."""
    path = tmp_path / "plan.json"
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-m", "ldpjax_experiments.bench", "--plan", "--size", "tiny",
                    "--only", "quantile,rw-ftpl", "--rng", "threefry2x32", "--json", str(path)],
                   env=env, check=True, timeout=600, capture_output=True)
    plans = json.loads(path.read_text())
    assert [p["execution"] for p in plans] == ["sharded", "sharded"]
    assert all(p["num_devices"] == 4 and p["fits"] for p in plans)
    assert all(p["xla_bytes_per_device"] is not None for p in plans)


def test_gpu_check_script_uses_options_the_cli_has():
    """Every option experiments/gpu_check.sh passes to bench / reproduce parses."""
    import argparse

    from ldpjax_experiments import cli

    text = (Path(__file__).resolve().parents[1] / "experiments" / "gpu_check.sh").read_text()
    bench_parser = argparse.ArgumentParser()
    bench.add_arguments(bench_parser)
    runs = re.findall(r'^part \w+ "\$\w+" "\$\{BENCH\[@\]\}" (.*)$', text, re.M)
    assert runs and all("--size paper" in r for r in runs)
    for line in runs:
        bench_parser.parse_args(line.replace('"', "").replace("$OUT", "out").split())
    (reproduce,) = re.findall(r'^part \w+ "\$\w+" "\$\{LDPJAX\[@\]\}" reproduce (.*)$', text,
                              re.M)
    assert "--size paper" in reproduce
    args, rest = cli._build_parser().parse_known_args(
        ["reproduce", *reproduce.replace('"', "").replace("$OUT", "out").split()])
    assert not rest and args.size == "paper"


def test_meta_eigh_floor_script_times_the_workloads_own_matrices(capsys):
    """``experiments/bench_meta_eigh.py`` decomposes the ``rw-meta`` workload's own Sigma*_{t-1}:
    one (m, m) matrix per round and run, symmetric, zero before the first round, decorrelated
    (1^T Sigma* 1 = 0) and not all zero after it; its report names every timed operation."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "experiments" / "bench_meta_eigh.py"
    spec = importlib.util.spec_from_file_location("bench_meta_eigh", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    size = WORKLOADS["rw-meta"].sizes["tiny"]
    star = script.workload_covariances("tiny")
    runs = size["seeds"] * len(size["mu"])
    assert star.shape == (size["horizon"], runs, 13, 13)
    np.testing.assert_array_equal(star[0], 0.0)
    np.testing.assert_allclose(star, np.swapaxes(star, -1, -2))
    scale = np.abs(star).max()
    assert scale > 0
    np.testing.assert_allclose(star.sum(axis=(-2, -1)), 0.0, atol=1e-5 * scale * 13 * 13)
    script.main(["--size", "tiny", "--repeats", "1"])
    report = capsys.readouterr().out
    for name in ("jnp.linalg.eigh", "jnp.linalg.eigvalsh", "jnp.linalg.cholesky",
                 "batched matmul", "np.linalg.eigh"):
        assert name in report


def test_frequency_workload_tiny_against_multi_freq_ldpy():
    """frequency-grr: ldpjax's side runs alone (finite per-seed statistics); against the optional
    peer multi-freq-ldpy (``pip install "ldpjax[bench]"``) the statistics agree, and without it
    the comparison is skipped (``PeerMissing`` is a ``unittest.SkipTest``)."""
    from ldpjax_experiments.bench.frequency import PeerMissing, peer_modules
    from ldpjax_experiments.bench.workload import Context

    workload = WORKLOADS["frequency-grr"]
    values = workload.prepare(workload.sizes["tiny"], Context()).run_ldpjax()
    assert values.shape == (workload.sizes["tiny"]["seeds"],) and np.all(np.isfinite(values))
    assert issubclass(PeerMissing, unittest.SkipTest)
    peer_modules()  # skips the rest where the peer is not installed
    record = bench.run_workload("frequency-grr", "tiny", repeats=1)
    assert record["agree"], record
    assert record["baseline"] == "multi-freq-ldpy" and record["numpy_scale"] == 4.0


def test_frequency_counts_workload_tiny_runs_the_counts_path():
    """frequency-oue-counts: opt-in, on the counts path (no RNG floor: its draws are binomials),
    with per-seed statistics near 1 (squared error over its closed-form expectation)."""
    from ldpjax_experiments.bench.workload import Context

    assert {"frequency-oue-counts", "frequency-grr-counts", "frequency-olh-counts"} <= set(
        WORKLOADS)
    assert not {"frequency-oue-counts"} & set(DEFAULT_WORKLOADS)
    workload = WORKLOADS["frequency-oue-counts"]
    prepared = workload.prepare(workload.sizes["tiny"], Context())
    assert "counts path" in prepared.shape and prepared.random_words({}) == 0
    values = prepared.run_ldpjax()
    assert values.shape == (workload.sizes["tiny"]["seeds"],) and np.all(np.isfinite(values))
    # each value averages 4 eps of sum-of-squares ratios with mean 1 (before the clipping and
    # renormalising, which only shrink it): a mean over 16 seeds far from (0, 3) is a bug
    assert 0.0 < float(np.mean(values)) < 3.0


# --------------------------------------------------------------------------- accounting workloads
def test_accounting_workloads_are_opt_in():
    assert {"accounting-pld", "accounting-shuffle"} <= set(WORKLOADS)
    assert not {"accounting-pld", "accounting-shuffle"} & set(DEFAULT_WORKLOADS)


def test_accounting_shuffle_workload_tiny_against_the_paper_algorithm():
    """accounting-shuffle: ldpjax's bound lies within the per-point reference's ends (up to its
    blocks' slack), and the check tells a bound 1% off either way apart."""
    from ldpjax_experiments.bench.accounting import SHUFFLE_SLACK
    from ldpjax_experiments.bench.workload import Context

    record = bench.run_workload("accounting-shuffle", "tiny", repeats=1)
    assert record["agree"], record
    assert -1e-9 <= record["bound_gap_min"] <= record["bound_gap"] <= SHUFFLE_SLACK
    assert record["rng_floor_seconds"] is None and record["baseline"] == "paper-reference"
    # the check can fail: 1% above the reference's upper end, 1% below its lower end
    workload = WORKLOADS["accounting-shuffle"]
    prepared = workload.prepare(workload.sizes["tiny"], Context())
    ours = prepared.run_ldpjax()
    upper, info = prepared.run_numpy(0)
    assert prepared.compare(ours, upper, info)["agree"]
    assert not prepared.compare(ours * 1.01, upper, info)["agree"]
    assert not prepared.compare(np.asarray(info["lower"]) * 0.99, upper, info)["agree"]


def test_accounting_pld_skips_without_dp_accounting(monkeypatch):
    from ldpjax_experiments.bench.accounting import DpAccountingMissing
    from ldpjax_experiments.bench.workload import Context

    monkeypatch.setitem(sys.modules, "dp_accounting.pld.privacy_loss_distribution", None)
    workload = WORKLOADS["accounting-pld"]
    assert issubclass(DpAccountingMissing, unittest.SkipTest)
    with pytest.raises(DpAccountingMissing, match="pip install"):
        workload.prepare(workload.sizes["tiny"], Context())


@pytest.mark.slow
def test_accounting_pld_workload_tiny_against_dp_accounting():
    """accounting-pld (compiles for ~5 s): ldpjax's epsilons lie within dp_accounting's
    optimistic and pessimistic estimates, and the check tells a bound 1% above the pessimistic
    one, or one below the optimistic one, apart."""
    pytest.importorskip("dp_accounting")
    from ldpjax_experiments.bench.accounting import budget_vectors
    from ldpjax_experiments.bench.workload import Context

    record = bench.run_workload("accounting-pld", "tiny", repeats=1)
    assert record["agree"], record
    assert record["bound_gap_min"] <= record["bound_gap"] <= 1e-6
    workload = WORKLOADS["accounting-pld"]
    size = workload.sizes["tiny"]
    prepared = workload.prepare(size, Context())
    ours = prepared.run_ldpjax()
    pessimistic, info = prepared.run_numpy(0)
    assert ours.shape == pessimistic.shape == budget_vectors(size["vectors"])[0].shape
    assert prepared.compare(ours, pessimistic, info)["agree"]
    assert not prepared.compare(pessimistic * 1.01, pessimistic, info)["agree"]
    assert not prepared.compare(ours * 0.5, pessimistic, info)["agree"]
    assert not prepared.compare(ours * np.nan, pessimistic, info)["agree"]
