"""Plain vectorised NumPy implementations of the benchmarked algorithms (the bench's baseline).

Written from the papers' descriptions (cited below) and the documented modelling choices of the
README, independently of the JAX code: nothing here imports ldpjax. Each function is the
natural NumPy program for a sweep -- vectorised over all runs (seeds x grid points) with a
Python loop over time -- and returns, per run, the statistic the bench compares (plus, where
the RNG floor needs it, a count). They use ``numpy.random.Generator`` (PCG64) streams, so
they agree with ldpjax in distribution, not bit for bit.

Functions:

* :func:`local_sgd` -- randomized-response Local SGD for a quantile (Algorithm 1 of
  "Federated Learning of Quantile Inference under Local Differential Privacy" (ICLR 2026)),
  Polyak-Ruppert estimate and the self-normalised V_T.
* :func:`epsilon_greedy` -- private epsilon-greedy, constant and capped-dynamic budgets
  (Ponte & Ferecatu, "A Privacy Budgeting Framework for Online Experimentation", eqs. 12,
  15-17), one segment.
* :func:`rw_ftpl` -- RW-FTPL on a fixed gain matrix ("Prediction with Expert Advice under Local
  Differential Privacy", ICLR 2026, Sec. 3).
* :func:`rw_adabatch` -- RW-AdaBatch with ComputeDelay by integer bisection (Corollary 1).
* :func:`rw_meta` -- RW-Meta over the 13 paper learners (12 rolling ridge + RW-FTPL).
* :func:`tree_hedge` -- Agarwal & Singh: Hedge on binary-tree noisy prefix sums.
* :func:`noisy_counter` -- the demo workload (a Bernoulli count released with Gaussian noise).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, ndtr

# --------------------------------------------------------------------------- quantile


def local_sgd(
    rng: np.random.Generator,
    tau: float,
    r: np.ndarray,
    loc: np.ndarray,
    weights: np.ndarray,
    local_steps,
    reps: int,
    c0: float = 20.0,
    a: float = 0.51,
    b: float = 100.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Local SGD with randomized response; returns (estimate, V_T), each of shape (reps,).

    Client k (weight p_k, truthful rate r_k, data N(loc_k, 1)) takes E_m local steps per round
    from the shared iterate, each with step c0 / (m^a + b) / E_m (as ldpjax.quantile.schedules): the
    true bit s = 1{x > q} is reported with probability r_k, else a fair coin, and
    q += lr * ((1 - r + 2 tau r) / (2 r) if report else -(1 + r - 2 tau r) / (2 r)).
    The server averages with p_k. Estimate: the sample-weighted Polyak-Ruppert average of the
    aggregated iterates; V_T = sum_m E_m t_m^2 (mean_m - mean_M)^2 / t_M^3 with mean_m the
    running average after round m and t_m the samples used (the paper's V_T with Q_T(r_m) =
    t_m mean_m / t_M).
    """
    r = np.asarray(r, np.float64)
    loc = np.asarray(loc, np.float64)
    weights = np.asarray(weights, np.float64)
    k = r.size
    up = (1.0 - r + 2.0 * tau * r) / (2.0 * r)
    down = (1.0 + r - 2.0 * tau * r) / (2.0 * r)
    q = np.zeros(reps)
    weighted_sum = np.zeros(reps)  # sum_m E_m q_m
    samples = 0
    # running sums of w_m = E_m t_m^2 times (1, mean_m, mean_m^2)
    s0 = 0.0
    s1 = np.zeros(reps)
    s2 = np.zeros(reps)
    for m, steps in enumerate(local_steps, start=1):
        lr = c0 / (m**a + b) / steps
        qk = np.repeat(q[:, None], k, axis=1)
        for _ in range(steps):
            x = loc + rng.standard_normal((reps, k))
            u = rng.random((reps, k))
            truthful = u < r
            coin = u >= 0.5 * (1.0 + r)  # given not truthful, u is uniform on [r, 1)
            report = np.where(truthful, x > qk, coin)
            qk += lr * np.where(report, up, -down)
        q = qk @ weights
        samples += steps
        weighted_sum += steps * q
        mean = weighted_sum / samples
        w = steps * float(samples) ** 2
        s0 += w
        s1 += w * mean
        s2 += w * mean * mean
    spread = s2 - 2.0 * mean * s1 + mean * mean * s0
    return mean, np.maximum(spread, 0.0) / float(samples) ** 3


# --------------------------------------------------------------------------- bandits


def epsilon_greedy(
    rng: np.random.Generator,
    ctr: np.ndarray,
    strategy: np.ndarray,
    gamma: np.ndarray,
    horizon: int,
) -> np.ndarray:
    """Total regret per run of private epsilon-greedy (one segment); arrays of shape (R,).

    ``strategy``: 0 constant (eps = eps_gamma = K / (K + e^gamma - 1)), 2 capped dynamic
    (eps_t = max(eps_t^dyn, eps_gamma) with eps_t^dyn = 1 for t <= K, else
    min(1, (K log t / t)^{1/3})). The greedy arm maximises the empirical CTR (0 before an arm is
    shown), ties uniformly at random; exploring shows a uniform arm (K-ary randomized
    response). Regret adds max(ctr) - ctr[arm] per visitor.
    """
    ctr = np.asarray(ctr, np.float64)
    strategy = np.asarray(strategy)
    gamma = np.asarray(gamma, np.float64)
    runs, k = strategy.shape[0], ctr.size
    shows = np.zeros((runs, k))
    clicks = np.zeros((runs, k))
    regret = np.zeros(runs)
    eps_gamma = k / (k + np.expm1(gamma))  # K / (K + e^gamma - 1)
    capped = strategy == 2
    best = ctr.max()
    rows = np.arange(runs)
    for t in range(1, horizon + 1):
        eps_dyn = 1.0 if t <= k else min(1.0, (k * math.log(t) / t) ** (1.0 / 3.0))
        eps = np.where(capped, np.maximum(eps_dyn, eps_gamma), eps_gamma)
        estimate = clicks / np.maximum(shows, 1.0)
        u = rng.random((runs, 3 + k))
        top = estimate == estimate.max(axis=1, keepdims=True)
        greedy = np.argmax(np.where(top, u[:, 3:], -1.0), axis=1)
        explored = np.minimum((u[:, 1] * k).astype(np.int64), k - 1)
        arm = np.where(u[:, 0] < eps, explored, greedy)
        rate = ctr[arm]
        shows[rows, arm] += 1.0
        clicks[rows, arm] += u[:, 2] < rate
        regret += best - rate
    return regret


# --------------------------------------------------------------------------- experts


def rw_ftpl(rng: np.random.Generator, gains: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Total gain per run of RW-FTPL; ``eta`` (R,) is each run's noise scale.

    G~ starts at z_0 ~ N(0, eta^2 I); each round plays argmax G~ (ties: lowest index), earns
    g_t[action] and adds g_t + z_t.
    """
    horizon, n = gains.shape
    eta = np.asarray(eta, np.float64)[:, None]
    runs = eta.shape[0]
    total = eta * rng.standard_normal((runs, n))
    earned = np.zeros(runs)
    for t in range(horizon):
        action = np.argmax(total, axis=1)
        earned += gains[t, action]
        total += gains[t] + eta * rng.standard_normal((runs, n))
    return earned


def leader_change_bound(beta: np.ndarray) -> np.ndarray:
    """p = 2 Phi(-sqrt2 beta) + 2 sqrt(pi) phi(beta) (Phi(beta) - Phi(-beta)) (Theorem 1)."""
    phi = np.exp(-0.5 * beta * beta) / math.sqrt(2.0 * math.pi)
    return 2.0 * ndtr(-math.sqrt(2.0) * beta) + 2.0 * math.sqrt(math.pi) * phi * erf(
        beta / math.sqrt(2.0)
    )


def compute_delay(gap, t, eta, n: int, alpha: float, steps: int = 31) -> np.ndarray:
    """Largest integer B in [1, 2^30] with p(k, B) <= alpha sqrt(log n / (t + B)); 1 if none.

    beta = k / (eta sqrt(2B)) - sqrt(log(2n - 2)). p grows and the right side shrinks with B,
    so the admissible B form an interval [1, B*]: integer bisection on [1, 2^30 + 1].
    """
    gap = np.asarray(gap, np.float64)
    eta = np.broadcast_to(np.asarray(eta, np.float64), gap.shape)
    lo = np.ones(gap.shape, np.int64)
    hi = np.full(gap.shape, 2**30 + 1, np.int64)
    scaled = gap / (eta * math.sqrt(2.0))
    offset = math.sqrt(math.log(2.0 * n - 2.0))
    for _ in range(steps):
        mid = lo + (hi - lo) // 2
        ok = leader_change_bound(scaled / np.sqrt(mid) - offset) <= alpha * np.sqrt(
            math.log(n) / (t + mid)
        )
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return lo


def rw_adabatch(
    rng: np.random.Generator, gains: np.ndarray, eta: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """(total gain, number of batches) per run of RW-AdaBatch; ``eta`` (R,) per run.

    At a batch start (round t, 1-based) the leader of the closed-batch total G~ is played for
    B = ComputeDelay(top-two gap, t) rounds; the batch's noisy gains are buffered and added to
    G~ when it ends. G~ starts at z_0 as in RW-FTPL.
    """
    horizon, n = gains.shape
    eta = np.asarray(eta, np.float64)
    runs = eta.shape[0]
    total = eta[:, None] * rng.standard_normal((runs, n))
    buffer = np.zeros((runs, n))
    earned = np.zeros(runs)
    batches = np.zeros(runs, np.int64)
    action = np.zeros(runs, np.int64)
    remaining = np.zeros(runs, np.int64)
    for t in range(horizon):
        start = remaining == 0
        if start.any():
            sub = total[start]
            top = np.partition(sub, n - 2, axis=1)[:, -2:]
            remaining[start] = compute_delay(top[:, 1] - top[:, 0], t + 1, eta[start], n, alpha)
            action[start] = np.argmax(sub, axis=1)
            batches += start
        earned += gains[t, action]
        buffer += gains[t] + eta[:, None] * rng.standard_normal((runs, n))
        remaining -= 1
        closing = remaining == 0
        total[closing] += buffer[closing]
        buffer[closing] = 0.0
    return earned, batches


#: The ridge learners' documented choices (README, experts section): windows, prior sds
#: (weak / medium / strong) and the model-misfit floor 1/4 added to the noise variance.
META_WINDOWS = (8, 16, 32, 64)
META_PRIOR_SDS = (1.0, 0.1, 0.01)
META_VARIANCE_FLOOR = 0.25


def rw_meta(rng: np.random.Generator, gains: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Total gain per run of RW-Meta with the 13 paper learners; ``eta`` (R,) per run.

    Learners 0..11: rolling ridge (window w in META_WINDOWS, slowest, x prior sd tau), fitted
    per expert on the last min(t - 1, w) noisy gains with features (1, -lag / w) and penalty
    (eta^2 + 1/4) / tau^2; they play the uniform distribution over the argmax set (uniform
    before any data). Learner 12: the leader of the cumulative noisy gains (ties: lowest
    index). Meta: y_t ~ N(0, c_t I - Sigma*_{t-1}), c_t = max(2t, lambda_max(Sigma*)), by
    eigendecomposition; play argmax(scores + y); then scores += X g~, Sigma += eta^2 X X^T.
    """
    horizon, n = gains.shape
    windows = np.repeat(np.asarray(META_WINDOWS, np.float64), len(META_PRIOR_SDS))
    taus = np.tile(np.asarray(META_PRIOR_SDS, np.float64), len(META_WINDOWS))
    ridge = windows.size
    m = ridge + 1
    width = int(max(META_WINDOWS))
    eta = np.asarray(eta, np.float64)
    runs = eta.shape[0]
    kappa = (eta[:, None] ** 2 + META_VARIANCE_FLOOR) / taus[None, :] ** 2  # (R, 12)
    buffer = np.zeros((runs, width, n))  # circular: slot (t - 1) % width holds round t
    cumulative = np.zeros((runs, n))
    actions = np.zeros((runs, m, n))
    actions[:, :ridge, :] = 1.0 / n
    actions[:, ridge, 0] = 1.0
    scores = np.zeros((runs, m))
    cov = np.zeros((runs, m, m))
    earned = np.zeros(runs)
    lags = np.arange(1, width + 1, dtype=np.float64)
    rows = np.arange(runs)
    for t in range(1, horizon + 1):
        star = cov - cov.sum(axis=(1, 2), keepdims=True) / m**2
        lam, vecs = np.linalg.eigh(star)
        level = np.maximum(2.0 * t, lam[:, -1])
        var = np.clip(level[:, None] - lam, 0.0, None)
        y = np.einsum("rij,rj->ri", vecs, np.sqrt(var) * rng.standard_normal((runs, m)))
        chosen = np.argmax(scores + y, axis=1)
        g = gains[t - 1]
        earned += actions[rows, chosen] @ g
        noisy = g[None, :] + eta[:, None] * rng.standard_normal((runs, n))
        scores += np.einsum("rmn,rn->rm", actions, noisy)
        cov += eta[:, None, None] ** 2 * np.matmul(actions, actions.transpose(0, 2, 1))
        slot = (t - 1) % width
        buffer[:, slot] = noisy
        cumulative += noisy
        slot_lag = (slot - np.arange(width)) % width  # lag - 1 of each slot
        used = (lags[None, :] <= np.minimum(t, windows)[:, None]).astype(np.float64)  # (12, W)
        trend = -used * lags[None, :] / windows[:, None]
        a = used.sum(1)[None, :] + kappa
        b = trend.sum(1)[None, :]
        d = (trend**2).sum(1)[None, :] + kappa
        coef = used[None] * (d[..., None] * used[None] - b[..., None] * trend[None])
        coef = coef / (a * d - b * b)[..., None]  # (R, 12, W) weight of lag l
        predictions = np.matmul(coef[..., slot_lag], buffer)  # (R, 12, n)
        ties = predictions >= predictions.max(-1, keepdims=True)
        actions[:, :ridge, :] = ties / ties.sum(-1, keepdims=True)
        actions[:, ridge, :] = 0.0
        actions[rows, ridge, np.argmax(cumulative, axis=1)] = 1.0
    return earned


def tree_hedge(
    rng: np.random.Generator, gains: np.ndarray, node_sd: np.ndarray, learning_rate: np.ndarray
) -> np.ndarray:
    """Total gain per run of Hedge on binary-tree noisy prefix sums (Agarwal & Singh).

    The node of level i that closes at round t (i = number of trailing zeros of t) holds the
    exact gain sum over rounds (t - 2^i, t] plus N(0, sd^2 I); the prefix sum released after
    round t sums the latest nodes of the levels where t has a one bit. Round t plays
    softmax(lambda * prefix(t - 1)). ``node_sd`` and ``learning_rate`` are (R,).
    """
    horizon, n = gains.shape
    levels = int(horizon).bit_length()
    sd = np.asarray(node_sd, np.float64)[:, None]
    lam = np.asarray(learning_rate, np.float64)[:, None]
    runs = sd.shape[0]
    prefix_exact = np.concatenate([np.zeros((1, n)), np.cumsum(gains, axis=0, dtype=np.float64)])
    nodes = np.zeros((runs, levels, n))
    released = np.zeros((runs, n))  # prefix(0) = 0
    earned = np.zeros(runs)
    for t in range(1, horizon + 1):
        logits = lam * released
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        earned += weights @ gains[t - 1]
        level = (t & -t).bit_length() - 1
        exact = prefix_exact[t] - prefix_exact[t - (1 << level)]
        nodes[:, level] = exact + sd * rng.standard_normal((runs, n))
        bits = [i for i in range(levels) if (t >> i) & 1]
        released = nodes[:, bits].sum(axis=1)
    return earned


# --------------------------------------------------------------------------- demo


def noisy_counter(
    rng: np.random.Generator, steps: int, mu: np.ndarray, rate: float = 0.5
) -> np.ndarray:
    """Error of the last released count per run: sum of Bernoulli(rate) bits plus N(0, 1/mu^2)
    noise on each step's bit, minus the true count (``mu`` (R,) per run, float32 like JAX)."""
    scale = (1.0 / np.asarray(mu, np.float64)).astype(np.float32)
    runs = scale.shape[0]
    noisy = np.zeros(runs, np.float32)
    true = np.zeros(runs, np.float32)
    for _ in range(steps):
        bits = (rng.random(runs, dtype=np.float32) < rate).astype(np.float32)
        noisy += bits + scale * rng.standard_normal(runs, dtype=np.float32)
        true += bits
    return noisy - true


__all__ = [
    "compute_delay",
    "epsilon_greedy",
    "leader_change_bound",
    "local_sgd",
    "noisy_counter",
    "rw_adabatch",
    "rw_ftpl",
    "rw_meta",
    "tree_hedge",
]
