"""RW-AdaBatch's fast path (one release per batch) against its sampling path (one per round).

The fast path buffers a batch's clean gains and releases B * (mean + N(0, (eta / sqrt B)^2 I))
once at the batch's last round: equal in law to the sum of the B per-round releases, which is
all the player ever reads. Both paths run on the same gains with independent seeds, and the
laws of what the player sees and does are compared with two-sample tests.

Tolerances (derived, not tuned): for N1 = N2 = N runs the two-sample Kolmogorov-Smirnov
statistic of two samples from one continuous law exceeds c(a) sqrt(2 / N) with probability a,
c(a) = sqrt(-log(a / 2) / 2); a = 1e-4 gives c = 2.23. With N = 3000, sqrt(2 / N) = 0.0258,
so the threshold is 0.0575 (for discrete statistics such as the number of batches the KS test
is conservative). Means: |difference| <= 5 standard errors sqrt(s1^2 / N + s2^2 / N).
The power check below shows the same thresholds reject a fast path with the wrong noise
(sd eta instead of sqrt(B) eta on the batch sum).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import record, rollout
from ldpjax.experts import (
    AdaBatchConfig,
    adabatch_params,
    bernoulli_gains,
    privatize_gains,
    rw_adabatch,
)


def _key(seed):
    return jax.random.key(seed, impl="philox4x32")


N_RUNS, T, N_EXPERTS, MU, ALPHA = 3000, 80, 3, 2.0, 2.0
KS_THRESHOLD = math.sqrt(-math.log(1e-4 / 2) / 2) * math.sqrt(2 / N_RUNS)
REC = record.combine(
    gain=record.total(lambda o: o.gain),
    batches=record.total(lambda o: o.batch_start.astype(jnp.int32)),
    last_size=record.last(lambda o: o.batch_size),
)


def _ks(a, b) -> float:
    a, b = np.sort(np.asarray(a, np.float64)), np.sort(np.asarray(b, np.float64))
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def _run(config, key, release=privatize_gains):
    """N_RUNS runs as ``simulate(..., num_seeds=N_RUNS)`` draws them (rollout with seed_index
    = s: the engine's key schedule, so the same samples as a simulate call), as one
    jit(vmap(rollout)): a single compiled program per algorithm (simulate compiles three
    kernels for it; the gains are drawn inside it too, instead of eagerly op by op).
    Keys: philox4x32 (the engine's default generator), whose programs compile ~30% faster on
    CPU than threefry2x32's. N = 3000 runs: at N = 1500 the power check had little margin
    (the broken path's KS statistics are ~0.075-0.11, the threshold was 0.081; with some
    draws they landed under it); at N = 3000 the threshold is 0.0575."""
    algo, params = rw_adabatch(config, release), adabatch_params(MU, ALPHA)

    @jax.jit
    def runs(key):
        gains = bernoulli_gains(_key(4), T, N_EXPERTS, 0.5)
        one = lambda s: rollout(algo, params, key, inputs=gains, record=REC, seed_index=s)  # noqa: E731
        return jax.vmap(one)(jnp.arange(N_RUNS))

    state, rec = runs(_key(key))
    stats = {k: np.asarray(v) for k, v in rec.items()}
    total = np.asarray(state.noisy_total)
    stats["total0"] = total[:, 0]  # G~ of the closed batches
    stats["spread"] = total[:, 0] - total[:, 1]
    return stats


@pytest.fixture(scope="module")
def runs():
    sampling = _run(AdaBatchConfig(N_EXPERTS, fast=False), 1)
    fast = _run(AdaBatchConfig(N_EXPERTS, fast=True), 2)
    return sampling, fast


def _agree(a, b) -> bool:
    ks_ok = all(_ks(a[k], b[k]) <= KS_THRESHOLD for k in ("gain", "batches", "total0", "spread"))
    means_ok = True
    for k in ("gain", "batches", "total0"):
        se = math.sqrt(a[k].var(ddof=1) / a[k].size + b[k].var(ddof=1) / b[k].size)
        means_ok &= abs(a[k].mean() - b[k].mean()) <= 5 * se
    return ks_ok and means_ok


def test_fast_path_equals_sampling_path_in_law(runs):
    sampling, fast = runs
    assert sampling["batches"].mean() < 0.6 * T  # batching happens (batches of > 1 round)
    for k in ("gain", "batches", "total0", "spread"):
        assert _ks(sampling[k], fast[k]) <= KS_THRESHOLD, (k, _ks(sampling[k], fast[k]))
    assert _agree(sampling, fast)


def test_the_comparison_rejects_a_wrong_fast_path(runs):
    """Power: a fast path that forgets the sqrt(B) (noise sd eta on the batch sum) is caught.

    The fast path calls the release on the batch mean with sensitivity Delta / sqrt(B), so B
    = (Delta / s)^2; the broken release uses Delta / B instead (sd eta / B on the mean).
    """
    delta = math.sqrt(N_EXPERTS)

    def broken(key, value, mu, sensitivity, *, granularity=None):
        b = (delta / sensitivity) ** 2
        return privatize_gains(key, value, mu, sensitivity / jnp.sqrt(b), granularity=granularity)

    sampling, _ = runs
    wrong = _run(AdaBatchConfig(N_EXPERTS, fast=True), 3, broken)
    assert not _agree(sampling, wrong)


def test_fast_path_draws_one_vector_per_batch_when_unbatched():
    """Outside vmap the batch draw sits behind a real lax.cond: count release calls at run time."""
    calls = []

    def counting(key, value, mu, sensitivity, *, granularity=None):
        jax.debug.callback(lambda: calls.append(1))
        return privatize_gains(key, value, mu, sensitivity, granularity=granularity)

    algo = rw_adabatch(AdaBatchConfig(N_EXPERTS, fast=True), counting)
    params = adabatch_params(MU, ALPHA)
    # jit (not vmap): the cond stays a real branch; one compiled program instead of eager ops
    run = jax.jit(lambda k: rollout(algo, params, _key(0),
                                    inputs=bernoulli_gains(k, T, N_EXPERTS, 0.5),
                                    record=record.every_step(lambda o: o.batch_start)))
    _, starts = run(_key(4))
    jax.effects_barrier()
    batches = int(np.sum(np.asarray(starts)))
    releases = len(calls) - 1  # minus z_0 drawn in init
    # every batch but the last one closes inside the horizon; the last may or may not
    assert batches - 1 <= releases <= batches
    assert releases < T // 2  # far fewer than one release per round
