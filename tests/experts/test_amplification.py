"""Worst-case gap law, batch-size laws and amplified privacy of RW-AdaBatch (paper 000,
Theorem 2, Lemmas 1-2), against closed forms, SciPy, and Monte Carlo with stated errors."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats

from ldpjax.accounting import gdp_delta, gdp_tradeoff
from ldpjax.accounting.amplification import (
    batch_mixture_delta,
    batch_mixture_delta_se,
    batch_mixture_tradeoff,
    empirical_batch_distribution,
    ex_post_mu,
)
from ldpjax.engine import record, simulate
from ldpjax.experts import (
    EXPERTS_HINTS,
    AdaBatchConfig,
    adabatch_params,
    amplified_delta,
    amplified_tradeoff,
    batch_survival,
    compute_delay,
    covering_batch_survival,
    equal_gains,
    gap_cdf,
    gap_pdf,
    rw_adabatch,
    worst_case_batch_distribution,
    worst_case_batch_sizes,
)

ALPHA = 0.01
# Jitted wrapper (the public function traced whole: one compilation per shape instead of one
# per eager op); the eager path is exercised by the other tests and the bad-input checks.
covering_survival = jax.jit(covering_batch_survival)


# --------------------------------------------------------------------------- F_k and f_k
def test_gap_law_for_two_experts_is_half_normal():
    # n = 2: the gap is |X1 - X2| ~ |N(0, 2)|.
    e = np.array([0.0, 0.3, 1.0, 2.5, 6.0])
    np.testing.assert_allclose(gap_cdf(e, 2), 2 * stats.norm.cdf(e / math.sqrt(2)) - 1, atol=2e-6)
    np.testing.assert_allclose(
        gap_pdf(e, 2), 2 * stats.norm.pdf(e / math.sqrt(2)) / math.sqrt(2), rtol=1e-5
    )
    assert float(gap_cdf(jnp.inf, 2)) == 1.0 and float(gap_pdf(jnp.inf, 2)) == 0.0


@pytest.mark.parametrize("n", [2, 10, 100, 1000])
def test_gap_pdf_integrates_to_one(n, x64):
    total, error = integrate.quad(lambda e: float(gap_pdf(e, n)), 0, np.inf, limit=200)
    assert total == pytest.approx(1.0, abs=1e-7)
    assert float(gap_cdf(0.0, n)) == pytest.approx(0.0, abs=1e-12)


def test_gap_cdf_derivative_is_the_pdf_and_everything_vectorises(x64):
    e = jnp.array([0.05, 0.4, 1.2])
    n = jnp.array([3.0, 10.0, 100.0])
    grads = jax.vmap(jax.grad(gap_cdf), in_axes=(0, 0))(e, n)
    np.testing.assert_allclose(grads, gap_pdf(e, n), rtol=1e-9)
    table = gap_cdf(e[:, None], n[None, :])  # broadcast over gaps x experts
    assert table.shape == (3, 3)
    assert np.all(np.diff(np.asarray(table), axis=0) > 0)  # increasing in e
    assert np.all(np.diff(np.asarray(table), axis=1) > 0)  # more experts: smaller gaps


def _ks_top_two_gaps(n, draws):
    """KS test of F_k against ``draws`` top-two gaps of n iid normals (fixed seed; NumPy
    draws, so every n and every test shares the one compiled gap_cdf of shape (draws,))."""
    normals = np.random.default_rng(100 + n).standard_normal((draws, n))
    top = np.sort(normals, axis=1)[:, -2:]
    gaps = top[:, 1] - top[:, 0]
    cdf = lambda x: np.asarray(gap_cdf(np.asarray(x, np.float32), n), np.float64)
    result = stats.kstest(gaps, cdf)
    assert result.pvalue > 1e-3, result


@pytest.mark.parametrize("n", [3, 10, 50])
def test_gap_cdf_is_the_law_of_simulated_top_two_gaps(n):
    """KS test of F_k against 5000 top-two gaps (20000 in the slow test below)."""
    _ks_top_two_gaps(n, 5000)


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 10, 50])
def test_gap_cdf_is_the_law_of_many_simulated_top_two_gaps(n):
    _ks_top_two_gaps(n, 20000)


def test_gap_tail_is_relatively_accurate():
    # 1 - F for n = 2 at large gaps: 2 Phi(-e / sqrt 2); the survival used by the batch law.
    from ldpjax.experts.amplification import _gap_cdf_and_sf

    e = jnp.array([4.0, 8.0, 12.0])
    sf = np.asarray(_gap_cdf_and_sf(e, jnp.asarray(2.0))[1])
    np.testing.assert_allclose(sf, 2 * stats.norm.sf(np.asarray(e) / math.sqrt(2)), rtol=1e-4)


# --------------------------------------------------------------------------- batch-size laws
@pytest.mark.parametrize("t", [100.0, 3000.0])
def test_batch_survival_is_the_law_of_compute_delay_on_worst_case_gaps(t):
    """P(ComputeDelay(sqrt(t) K, t) >= b) with K ~ simulated top-two gaps, n = 10.

    40000 draws: sd of a frequency <= 0.0025; we allow 4 sd (plus 1e-4 for float32 rounding).
    Also checks that eta cancels: the law is the same for eta = 1 and eta = 7.
    """
    n, draws = 10, 40000
    normals = np.random.default_rng(int(t)).standard_normal((draws, n)).astype(np.float32)
    top = np.sort(normals, axis=1)[:, -2:]
    gap = top[:, 1] - top[:, 0]
    sizes = np.asarray(compute_delay(math.sqrt(t) * gap, t, 1.0, n, ALPHA))
    scaled = np.asarray(compute_delay(7.0 * math.sqrt(t) * gap, t, 7.0, n, ALPHA))
    assert np.mean(sizes == scaled) > 0.999
    b = np.array([2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 300.0])
    empirical = np.array([(sizes >= x).mean() for x in b])
    analytic = np.asarray(jax.jit(batch_survival)(b, t, n, ALPHA))
    sd = np.sqrt(np.maximum(empirical * (1 - empirical), 1.0 / draws) / draws)
    np.testing.assert_array_less(np.abs(analytic - empirical), 4 * sd + 1e-4)
    assert float(batch_survival(1.0, t, n, ALPHA)) == 1.0


def test_worst_case_distribution_is_a_binned_covering_law():
    t = jnp.array([10.0, 1e3, 1e5])
    n = jnp.array([2.0, 10.0, 100.0])[:, None]
    sizes, weights = worst_case_batch_distribution(t, n, ALPHA)
    assert weights.shape == (3, 3, sizes.shape[0])
    np.testing.assert_allclose(np.sum(weights, -1), 1.0, atol=1e-5)
    assert np.all(np.asarray(weights) >= 0)
    # Each bin's mass sits on its smallest size: P(size >= b) equals the covering law at the
    # bin edges, and stays below it in between (stochastically smaller).
    survival = np.cumsum(np.asarray(weights)[..., ::-1], axis=-1)[..., ::-1]
    edges = np.asarray(sizes)[:60]
    exact = np.asarray(
        covering_survival(edges[None, None, :], t[None, :, None], n[:, :, None], ALPHA)
    )  # jitted: 1 compilation
    np.testing.assert_allclose(survival[..., :60], exact, atol=2e-5)
    # Later rounds get longer batches (the gap scale grows like sqrt t).
    mean = np.sum(np.asarray(weights) * np.asarray(sizes), -1)
    assert np.all(np.diff(mean, axis=-1) > 0)


RUNS = 2000


@pytest.fixture(scope="module")
def simulated_batches():
    """Monte Carlo batch sizes of RW-AdaBatch on tied gains (the worst case), fixed keys.

    Round 300 for n = 10 too (the chain's run time grows with t; rounds 1000 and 3000 are in
    the slow large-simulation test below)."""
    out = {}
    for seed, (n, t) in enumerate([(2, 300), (10, 300)]):
        sizes = worst_case_batch_sizes(jax.random.key(seed + 1), n, ALPHA, (t,), RUNS)
        out[(n, t)] = np.asarray(sizes)[:, 0]
    return out


def test_fast_worst_case_simulator_matches_the_round_level_algorithm(simulated_batches):
    """worst_case_batch_sizes (batch-level chain) vs rw_adabatch on equal_gains via the engine.

    Two independent samples of 2000 runs (n = 2, round 300): the difference of two
    frequencies has sd <= sqrt(2 * 0.25 / 2000) = 0.016; we allow 4 sd computed from the
    observed frequencies.
    """
    n, t = 2, 300
    fast = simulated_batches[(n, t)]
    gains = equal_gains(jax.random.key(3), t, n)
    engine = simulate(
        rw_adabatch(AdaBatchConfig(n)),
        adabatch_params(1.0, ALPHA),
        jax.random.key(8),
        num_seeds=RUNS,
        inputs=gains,
        hints=EXPERTS_HINTS,
        record=record.at_steps([t], lambda out: out.batch_size),
    ).record[:, 0]
    for b in (2, 3, 5, 8, 13, 21, 34):
        p1, p2 = (fast >= b).mean(), (engine >= b).mean()
        sd = math.sqrt(max(p1 * (1 - p1) + p2 * (1 - p2), 2.0 / RUNS) / RUNS)
        assert abs(p1 - p2) <= 4 * sd, (b, p1, p2)
    assert fast.max() > 20 and engine.max() > 20


@pytest.mark.parametrize("case", [(2, 300), (10, 300)])
def test_analytic_law_is_stochastically_below_the_simulated_one(case, simulated_batches):
    """covering_batch_survival(b) <= P_MC(B >= b) + 4 sd for every b (Lemma 1's premise)."""
    n, t = case
    sizes, runs = simulated_batches[case], RUNS
    # 15 points (repeats allowed: the same shape for both cases, one compilation)
    b = np.round(np.geomspace(2, sizes.max() + 1, 15))
    empirical = np.array([(sizes >= x).mean() for x in b])
    analytic = np.asarray(covering_survival(b, float(t), n, ALPHA))
    sd = np.sqrt(np.maximum(empirical * (1 - empirical), 1.0 / runs) / runs)
    np.testing.assert_array_less(analytic, empirical + 4 * sd)
    # ... and it is not vacuous: it gives real mass to batching.
    assert analytic[0] > 0.2


MUS = jnp.array([0.5, 1.0, 2.0])[:, None, None]  # (mu, row, x)
EPS = jnp.linspace(0.0, 4.0, 17)  # EPS[4] = 1.0
FPR = jnp.array([1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.6])
CASES = [(2, 300), (10, 300)]
PADDED_BATCHES = np.array([1, 1, 4, 4, 9, 2, 2, 2])
LATER_ROUNDS = (1e3, 1e4, 1e5)  # n = 10


@pytest.fixture(scope="module")
def curves(simulated_batches):
    """Every privacy curve of the tests below in one call per function (one compilation each).

    Analytic rows: the two Monte Carlo cases, then n = 10 at LATER_ROUNDS. Empirical rows: the
    two Monte Carlo cases, then a point mass on B = 9 (all runs of size 9), then PADDED_BATCHES
    repeated (4 distinct sizes, padded with zero weight to the rows' common width).
    """
    t = jnp.array([c[1] for c in CASES] + list(LATER_ROUNDS))[:, None]
    n = jnp.array([c[0] for c in CASES] + [10] * len(LATER_ROUNDS), jnp.float32)[:, None]
    batches = np.stack(
        [simulated_batches[c] for c in CASES]
        + [np.full(RUNS, 9), np.tile(PADDED_BATCHES, RUNS // len(PADDED_BATCHES))]
    )
    sizes, weights = empirical_batch_distribution(batches)  # (4, K)
    sizes, weights = sizes[:, None, :], weights[:, None, :]  # law rows on axis 1

    # PADDED_BATCHES' own (unpadded, 4-component) law, for test_empirical_law_padded...
    sizes4, weights4 = empirical_batch_distribution(PADDED_BATCHES)

    @jax.jit  # the public functions traced whole into one program: one compilation
    def all_curves(t, n, sizes, weights, sizes4, weights4):
        return dict(
            unpadded_delta=batch_mixture_delta(MUS[:, 0], sizes4, weights4, EPS),  # (3, 17)
            unpadded_f=batch_mixture_tradeoff(MUS[:, 0], sizes4, weights4, FPR),  # (3, 7)
            delta=amplified_delta(MUS, t, n, ALPHA, EPS),  # (3, 5, 17)
            f=amplified_tradeoff(MUS, t, n, ALPHA, FPR),  # (3, 5, 7)
            mc_delta=batch_mixture_delta(MUS, sizes, weights, EPS),  # (3, 4, 17)
            mc_se=batch_mixture_delta_se(MUS, sizes, weights, EPS, RUNS),
            mc_f=batch_mixture_tradeoff(MUS, sizes, weights, FPR),  # (3, 4, 7)
            gdp_delta=gdp_delta(MUS, EPS),  # (3, 1, 17)
            gdp_delta_third=gdp_delta(MUS / 3.0, EPS),
            gdp_f=gdp_tradeoff(MUS, FPR),  # (3, 1, 7)
            gdp_f_third=gdp_tradeoff(MUS / 3.0, FPR),
        )

    out = jax.tree_util.tree_map(np.asarray, all_curves(t, n, sizes, weights, sizes4, weights4))
    return dict(out, law_width=sizes.shape[-1])


@pytest.mark.parametrize("row", [0, 1], ids=["case0", "case1"])
def test_analytic_privacy_never_claims_more_than_monte_carlo(row, curves):
    """delta_A(eps) >= delta_MC(eps) - 4 se(eps) and f_A(a) <= f_MC(a) + 4 max se
    (cases (n, t) = (2, 300), (10, 300); mu in {0.5, 1, 2}).

    delta_MC(eps) is a mean of R iid terms delta_{mu/sqrt(B_r)}(eps) in [0, 1]: its standard
    error is their sd / sqrt(R). A uniform error d on delta moves the tradeoff curve (the
    envelope of the (eps, delta(eps)) lines) by at most d, hence the tolerance on f.
    """
    analytic, monte_carlo, se = curves["delta"][:, row], curves["mc_delta"][:, row], curves[
        "mc_se"
    ][:, row]
    assert np.all(analytic >= monte_carlo - 4 * se - 1e-6)
    # Amplification is real: both are below the un-amplified mu-GDP delta.
    plain = curves["gdp_delta"][:, 0]
    assert np.all(analytic <= plain + 1e-6) and np.mean(analytic < 0.9 * plain) > 0.5
    f_analytic, f_mc = curves["f"][:, row], curves["mc_f"][:, row]
    assert np.all(f_analytic <= f_mc + 4 * se.max(axis=-1, keepdims=True) + 1e-6)
    assert np.all(f_analytic >= curves["gdp_f"][:, 0] - 1e-6)


# --------------------------------------------------------------------------- accounting
def test_ex_post_mu_and_single_component_mixture(curves):
    assert float(ex_post_mu(1.0, 4)) == pytest.approx(0.5)
    np.testing.assert_allclose(ex_post_mu(2.0, jnp.array([1.0, 16.0])), [2.0, 0.5])
    # A point mass on B = 9 (the fixture's last empirical row, 2-d law broadcast against
    # mu and eps) is the (mu / 3)-GDP curve.
    np.testing.assert_allclose(curves["mc_delta"][:, 2], curves["gdp_delta_third"][:, 0],
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(curves["mc_f"][:, 2], curves["gdp_f_third"][:, 0],
                               rtol=1e-5, atol=1e-7)
    assert np.all(curves["mc_se"][:, 2] < 1e-5)  # one batch size in every run: no spread


def test_amplified_privacy_vectorises_over_t_and_mu(curves):
    mus = MUS[:, 0, 0]
    rounds = jnp.array(LATER_ROUNDS)
    delta = curves["delta"][:, len(CASES):, 4]  # eps = 1.0; (mu, t)
    assert delta.shape == (3, 3)
    assert np.all(np.diff(delta, axis=0) > 0)  # larger mu: less private
    assert np.all(np.diff(delta, axis=1) < 0)  # later rounds: longer batches, more private
    batched = jax.vmap(lambda m: amplified_delta(m, rounds, 10, ALPHA, 1.0))(mus)
    np.testing.assert_allclose(batched, delta, rtol=1e-5)


def test_gradients_match_finite_differences(x64):
    def fd(f, x, h):
        return (f(x + h) - f(x - h)) / (2 * h)

    # jitted (the public function traced whole): 2 compilations instead of ~20 eager ops
    d_t, d_alpha = jax.jit(jax.grad(batch_survival, argnums=(1, 3)))(20.0, 2000.0, 10.0, 0.05)
    survival = jax.jit(batch_survival)
    ref = fd(lambda a: float(survival(20.0, 2000.0, 10.0, a)), 0.05, 1e-6)
    assert float(d_alpha) == pytest.approx(ref, rel=1e-5)
    ref = fd(lambda t: float(survival(20.0, t, 10.0, 0.05)), 2000.0, 1e-2)
    assert float(d_t) == pytest.approx(ref, rel=1e-5)


@pytest.mark.slow
def test_amplified_delta_gradient_matches_finite_differences(x64):
    g = jax.grad(amplified_delta)(1.0, 2000.0, 10.0, 0.05, 0.5)
    h = 1e-6
    ref = (
        float(amplified_delta(1.0 + h, 2000.0, 10.0, 0.05, 0.5))
        - float(amplified_delta(1.0 - h, 2000.0, 10.0, 0.05, 0.5))
    ) / (2 * h)
    assert float(g) == pytest.approx(ref, rel=1e-5)


# --------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gap_cdf(-0.1, 10), "e"),
        (lambda: gap_cdf(0.5, 1), "n"),
        (lambda: gap_pdf(0.5, 2.5), "n"),
        (lambda: batch_survival(2.0, 0.5, 10, 0.01), "t"),
        (lambda: batch_survival(2.0, 10.0, 10, 0.0), "alpha"),
        (lambda: amplified_delta(0.0, 100.0, 10, 0.01, 1.0), "mu"),
        (lambda: amplified_delta(jnp.inf, 100.0, 10, 0.01, 1.0), "mu"),
        (lambda: amplified_delta(1.0, 100.0, 1, 0.01, 1.0), "n"),
        (lambda: amplified_delta(1.0, 100.0, 10, -1.0, 1.0), "alpha"),
        (lambda: amplified_tradeoff(1.0, 100.0, 10, 0.01, 1.5), "fpr"),
        (lambda: ex_post_mu(1.0, 0.5), "batch_size"),
        (lambda: worst_case_batch_sizes(jax.random.key(0), 1, 0.01, (10,), 5), "num_experts"),
        (lambda: worst_case_batch_sizes(jax.random.key(0), 3, 0.0, (10,), 5), "alpha"),
        (lambda: empirical_batch_distribution(np.array([1, 0, 3])), "batch_sizes"),
        (lambda: empirical_batch_distribution(np.array([1, 2, 3]), width=2), "width"),
        (lambda: batch_mixture_delta(1.0, [1.0, 2.0], [0.5, 0.6], 1.0), "weights"),
    ],
)
def test_bad_inputs_raise(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


def test_bad_rounds_raise():
    with pytest.raises(ValueError, match="rounds must be strictly increasing"):
        worst_case_batch_sizes(jax.random.key(0), 3, 0.01, (10, 5), 5)


@pytest.mark.slow
@pytest.mark.parametrize("n, t", [(10, 3000), (100, 1000)])
def test_analytic_law_is_stochastically_below_a_large_simulation(n, t):
    """As above with 20000 runs (sd of a frequency <= 0.0035): the covering law stays below."""
    runs = 20000
    sizes = np.asarray(worst_case_batch_sizes(jax.random.key(77), n, ALPHA, (t,), runs))[:, 0]
    b = np.unique(np.round(np.geomspace(2, sizes.max() + 1, 20)))
    empirical = np.array([(sizes >= x).mean() for x in b])
    analytic = np.asarray(covering_batch_survival(b, float(t), n, ALPHA))
    sd = np.sqrt(np.maximum(empirical * (1 - empirical), 1.0 / runs) / runs)
    np.testing.assert_array_less(analytic, empirical + 4 * sd)


def test_tiny_mixture_components_do_not_produce_nan():
    """Regression for the foundation's gdp_delta at mu^2 / eps below float32 precision (huge
    batches give mu / sqrt(B) ~ 3e-5): delta must be 0, not NaN."""
    mus = 6.589444e-05 * (1 + jnp.linspace(-1e-3, 1e-3, 201))
    delta = np.asarray(gdp_delta(mus, 1.0))
    assert np.all(np.isfinite(delta)) and np.all(delta == 0.0)


def test_empirical_law_padded_to_a_fixed_width(curves):
    """Zero-weight padding keeps the law: the same sizes and weights first, then size 1 at
    weight 0; the curves agree up to float32 summation order (a few ulps, hence 1e-6).

    The padded curves are the fixture's last row (PADDED_BATCHES repeated, padded to the
    rows' common width, as ``width`` pads); the fixture also evaluates the unpadded law."""
    batches = PADDED_BATCHES
    sizes, weights = empirical_batch_distribution(batches)
    padded_sizes, padded_weights = empirical_batch_distribution(batches, width=8)
    assert padded_sizes.shape == padded_weights.shape == (8,)
    assert np.array_equal(padded_sizes[:4], sizes) and np.array_equal(padded_weights[:4], weights)
    assert np.all(padded_sizes[4:] == 1.0) and np.all(padded_weights[4:] == 0.0)
    wide_sizes, wide_weights = empirical_batch_distribution(
        np.tile(batches, RUNS // len(batches)), width=curves["law_width"]
    )
    assert np.array_equal(wide_sizes[:4], sizes) and np.array_equal(wide_weights[:4], weights)
    assert curves["law_width"] > 8 and np.all(wide_weights[4:] == 0.0)
    for padded, unpadded in (("mc_delta", "unpadded_delta"), ("mc_f", "unpadded_f")):
        np.testing.assert_allclose(curves[padded][:, 3], curves[unpadded], rtol=1e-6, atol=1e-7)
