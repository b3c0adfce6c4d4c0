"""The frequency-oracle workloads: ldpjax's online frequency family against multi-freq-ldpy.

``frequency-grr``, ``frequency-oue`` and ``frequency-olh`` (opt-in: ``ldpjax bench --only
frequency-grr,frequency-oue,frequency-olh``) run one workload each: n users holding fixed items
over d (Zipf(1.1), drawn once with NumPy seed 0, the same on both sides) report once through the
oracle, for every epsilon of a grid and ``seeds`` seeds, and the server estimates the d
frequencies.

* **ldpjax**: :func:`ldpjax.frequency.online_frequency` on its reports path (every user's
  report drawn by the mechanism, as the peer does), one compiled ``simulate`` sweep of seeds x
  eps; ``frequency-grr-counts``, ``frequency-oue-counts`` and ``frequency-olh-counts`` run the
  same sweep on its counts path (the support counts drawn from the histogram: a simulation of
  the estimator's law, not of each report), against the same peer runs;
* **the peer**: multi-freq-ldpy's ``GRR_Client`` / ``UE_Client`` / ``LH_Client`` looped over
  the users and its ``*_Aggregator_MI`` estimators, as its users call them (a Python list of
  reports per run). Its time per run is the same for every seed, so it runs ``peer_seeds`` of
  the seeds and its seconds are scaled by ``seeds / peer_seeds`` (``numpy_scale``).

Statistic (one value per seed): multi-freq-ldpy's estimator returns the debiased frequencies
clipped at 0 and renormalised; ldpjax's unbiased estimates get the same post-processing (NumPy,
timed with the ldpjax side), and each side reports sum_v (f^(v) - f(v))^2 divided by the closed
form E[sum_v (f~(v) - f(v))^2] of the unbiased estimate
(:func:`ldpjax.frequency.expected_squared_error`), averaged over the eps grid: the same
expectation on both sides.

The peer is an optional bench extra (``pip install "ldpjax[bench]"``: ``multi-freq-ldpy``, and
``xxhash<2``, without which its local-hashing client raises "Strings must be encoded before
hashing"), never a runtime dependency: without it the workloads raise :class:`PeerMissing`
(a ``unittest.SkipTest``: pytest skips, ``ldpjax bench`` prints the message and goes on).
"""

from __future__ import annotations

import importlib
import unittest
from typing import Any

import numpy as np

from ldpjax_experiments.bench.workload import Context, Prepared, Workload

#: The eps grid of every frequency workload.
EPS = (0.5, 1.0, 2.0, 4.0)
#: The oracles of the workloads (the peer's client and estimator of each).
ORACLES = ("grr", "oue", "olh")
PEER = "multi-freq-ldpy"


class PeerMissing(unittest.SkipTest):
    """multi-freq-ldpy (or a working ``xxhash<2``) is not installed: the workload is skipped."""


def peer_modules() -> dict[str, Any]:
    """multi-freq-ldpy's GRR, UE and LH modules, or :class:`PeerMissing` saying how to install."""
    try:
        mods = {name: importlib.import_module(f"multi_freq_ldpy.pure_frequency_oracles.{name}")
                for name in ("GRR", "UE", "LH")}
        import xxhash

        xxhash.xxh32("0", seed=1)  # xxhash >= 2 raises "Strings must be encoded before hashing"
    except (ImportError, TypeError) as err:
        raise PeerMissing(
            f"the frequency workloads compare ldpjax with {PEER}, which is not usable here "
            f"({type(err).__name__}: {err}); install the bench extra: pip install "
            f"'ldpjax[bench]' (multi-freq-ldpy>=0.2.5 and xxhash<2)") from err
    return mods


def zipf_items(n: int, d: int, s: float = 1.1, seed: int = 0) -> np.ndarray:
    """n items over d with P[v] proportional to (v + 1)^-s (NumPy, fixed seed)."""
    p = np.arange(1, d + 1, dtype=np.float64) ** -s
    return np.random.default_rng(seed).choice(d, size=n, p=p / p.sum()).astype(np.int32)


def mi_postprocess(estimates: np.ndarray) -> np.ndarray:
    """multi-freq-ldpy's MI post-processing: clip at 0, renormalise (unchanged if all 0)."""
    clipped = np.clip(estimates, 0.0, None)
    total = clipped.sum(-1, keepdims=True)
    return np.where(total > 0, clipped / np.where(total > 0, total, 1.0), clipped)


def _words_per_user(oracle: str, d: int) -> float:
    """32-bit random words of one report: K-RR 2, OUE d, OLH 2 + the public hash seed's."""
    from ldpjax.mechanisms.local_hashing import hash_words

    return {"grr": 2.0, "oue": float(d), "olh": 2.0 + hash_words(d)}[oracle]


def _prepare(oracle: str, path: str = "reports"):
    def prepare(size: dict, ctx: Context) -> Prepared:
        from ldpjax.engine import product_grid, record
        from ldpjax.frequency.online import (
            OnlineFrequencyConfig,
            expected_squared_error,
            frequency_params,
            online_frequency,
        )

        n, d, seeds, peer_seeds = size["users"], size["items"], size["seeds"], size["peer_seeds"]
        eps = np.asarray(EPS)
        items = zipf_items(n, d)
        truth = np.bincount(items, minlength=d) / n
        config = OnlineFrequencyConfig(max_items=d, oracle=oracle, users=n, path=path)
        algorithm = online_frequency(config)
        params = product_grid(frequency_params(config, 1.0), eps=list(EPS))
        recorder = record.last(_estimate)
        scale = np.array([float(expected_squared_error(config, e, d, n)) for e in EPS])
        try:  # compile the peer's numba clients before the timed runs (as ldpjax's first call)
            _peer_run(peer_modules(), oracle, [int(items[0])], d, 1.0)
        except PeerMissing:
            pass

        def statistic(estimates):  # (eps, runs, d) -> (runs,)
            err = np.sum((mi_postprocess(estimates) - truth) ** 2, axis=-1)
            return (err / scale[:, None]).mean(0)

        def run_ldpjax():
            est = ctx.simulate(algorithm, params, 1, num_seeds=seeds, grid_ndim=1,
                               inputs=items[None, :], record=recorder)
            return statistic(np.asarray(est, np.float64))

        def run_numpy(seed):
            mods = peer_modules()
            np.random.seed(seed)
            values = [item.item() for item in items]
            out = np.empty((len(EPS), peer_seeds, d))
            for j in range(peer_seeds):
                for i, e in enumerate(EPS):
                    out[i, j] = _peer_run(mods, oracle, values, d, float(e))
            return statistic(out), {"peer": PEER, "peer_seeds": peer_seeds}

        words = len(eps) * seeds * n * _words_per_user(oracle, d) if path == "reports" else 0
        return Prepared(
            shape=f"{oracle.upper()} ({path} path), d = {d}, n = {n} users (Zipf 1.1), eps in "
                  f"{list(EPS)}, {seeds} seeds; {PEER} runs {peer_seeds} of them "
                  f"(x {seeds / peer_seeds:g})",
            statistic="MI-estimate squared error / closed form, mean over eps",
            run_ldpjax=run_ldpjax,
            run_numpy=run_numpy,
            random_words=lambda info: words,
            numpy_scale=seeds / peer_seeds,
            baseline=PEER,
        )

    return prepare


def _estimate(outputs):
    return outputs.estimate


def _peer_run(mods, oracle: str, values: list[int], d: int, eps: float) -> np.ndarray:
    """One run of the peer as its users call it: a client per user, then its MI estimator."""
    if oracle == "grr":
        reports = [mods["GRR"].GRR_Client(x, d, eps) for x in values]
        return mods["GRR"].GRR_Aggregator_MI(reports, d, eps)
    if oracle == "oue":
        reports = [mods["UE"].UE_Client(x, d, eps, True) for x in values]
        return mods["UE"].UE_Aggregator_MI(reports, eps, True)
    reports = [mods["LH"].LH_Client(x, d, eps, True) for x in values]
    return mods["LH"].LH_Aggregator_MI(reports, d, eps, True)


def _sizes(oracle: str) -> dict[str, dict[str, int]]:
    # the peer's seconds per seed (4 runs) at n = 1e5, d = 1024: GRR ~0.7, OUE ~7, OLH ~240; it
    # runs at least 2 seeds, so that its statistic has a standard error
    share = {"grr": 20, "oue": 4, "olh": 2}[oracle]
    return {
        "tiny": {"users": 500, "items": 32, "seeds": 16, "peer_seeds": 4},
        "small": {"users": 10_000, "items": 1024, "seeds": 20, "peer_seeds": max(2, share // 4)},
        "paper": {"users": 100_000, "items": 1024, "seeds": 20, "peer_seeds": share},
    }


WORKLOADS = tuple(
    Workload(f"frequency-{oracle}", "frequency",
             f"{oracle.upper()} frequency estimation against {PEER} (Wang et al. 2017)",
             _sizes(oracle), _prepare(oracle), default=False)
    for oracle in ORACLES
) + tuple(
    Workload(f"frequency-{oracle}-counts", "frequency",
             f"{oracle.upper()} frequency estimation, ldpjax's counts path (a simulation of the "
             f"support counts' law), against {PEER}'s reports",
             _sizes(oracle), _prepare(oracle, "counts"), default=False)
    for oracle in ORACLES
)

__all__ = ["EPS", "ORACLES", "PEER", "PeerMissing", "WORKLOADS", "mi_postprocess",
           "peer_modules", "zipf_items"]
