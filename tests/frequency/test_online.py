"""The online frequency-estimation family (:mod:`ldpjax.frequency.online`).

Expected values come from Wang, Blocki, Li & Jha (USENIX Security 2017)'s (p*, q*) written out
here in NumPy (not from the module). Statistical checks: the mean of S per-seed values is
compared within 4 standard errors (the SE from the seeds' own spread), at fixed keys: a false
alarm has probability 6e-5 per check when the code is right.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.accounting import epsilon
from ldpjax.engine import make_key, product_grid, record, rollout, simulate
from ldpjax.frequency.online import (
    ORACLES,
    OnlineFrequencyConfig,
    expected_squared_error,
    frequency_params,
    online_frequency,
)

Z = 4.0


def _pq(oracle: str, eps: float, d: int, k: int | None = None) -> tuple[float, float]:
    """(p*, q*) of one report (Wang et al. 2017, Sec. 4; Ye & Barg 2018 for subset selection)."""
    e = math.exp(eps)
    if oracle == "grr":
        return e / (e + d - 1), 1 / (e + d - 1)
    if oracle == "sue":
        return math.exp(eps / 2) / (math.exp(eps / 2) + 1), 1 / (math.exp(eps / 2) + 1)
    if oracle == "oue":
        return 0.5, 1 / (e + 1)
    if oracle in ("blh", "olh"):
        g = 2 if oracle == "blh" else int(round(e + 1))
        return e / (e + g - 1), 1 / g
    if oracle == "hr":
        return e / (e + 1), 0.5
    return k * e / (k * e + d - k), (k * (k - 1) * e + k * (d - k)) / ((d - 1) * (k * e + d - k))


def _expected(oracle, eps, d, n, k=None) -> float:
    """E[sum_v (f~ - f)^2] = (1/n) [d q (1-q)/(p-q)^2 + (1-p-q)/(p-q)] (Wang et al., Thm. 2)."""
    p, q = _pq(oracle, eps, d, k)
    return (d * q * (1 - q) / (p - q) ** 2 + (1 - p - q) / (p - q)) / n


def _config(oracle, **kw):
    k = 5 if oracle == "ss" else None
    return OnlineFrequencyConfig(
        max_items=kw.pop("max_items", 16), oracle=oracle, subset_size=k, **kw
    )


@pytest.mark.parametrize("oracle", ORACLES)
def test_closed_form_of_the_expected_error(oracle):
    config = _config(oracle)
    d = 16 if oracle == "ss" else 7
    got = float(expected_squared_error(config, 1.5, d, 500))
    assert got == pytest.approx(_expected(oracle, 1.5, d, 500, 5), rel=1e-5)


def _fast_one(pairs, fast):
    """The cases of ``pairs``, all but ``fast`` behind ``@pytest.mark.slow`` (each compiles a
    sweep: about 2-4 s apiece on 2 cores)."""
    return [pytest.param(*pair, marks=() if pair == fast else pytest.mark.slow) for pair in pairs]


@pytest.mark.parametrize(
    "oracle,path",
    _fast_one([(o, p) for p in ("reports", "counts") for o in ORACLES], ("oue", "reports")),
)
def test_squared_error_matches_wang_et_al(oracle, path):
    """Mean over 200 seeds of sum_v (f~ - f)^2 after 2 rounds of 300 users, eps = 1.5."""
    config = _config(oracle, users=300, path=path)
    d = 16 if oracle == "ss" else 7
    params = frequency_params(config, 1.5, d=d)
    seeds = 200
    out = simulate(
        online_frequency(config),
        params,
        make_key(11),
        2,
        num_seeds=seeds,
        record=record.last(lambda o: o.squared_error),
        keep_state=False,
    )
    err = np.asarray(out.record, np.float64)
    se = err.std(ddof=1) / math.sqrt(seeds)
    assert abs(err.mean() - _expected(oracle, 1.5, d, 600, 5)) <= Z * se, (err.mean(), se)


@pytest.mark.slow
def test_estimates_are_unbiased_for_given_items():
    """GRR reports of fixed items: the mean estimate of every item is its true frequency."""
    config = _config("grr", users=400)
    items = np.repeat(np.arange(4), [200, 100, 60, 40])[None, :]
    seeds = 300
    out = simulate(
        online_frequency(config),
        frequency_params(config, 1.0, d=4),
        make_key(3),
        1,
        num_seeds=seeds,
        inputs=items,
        record=record.last(lambda o: o.estimate),
        keep_state=False,
    )
    est = np.asarray(out.record, np.float64)  # (seeds, 16)
    truth = np.array([0.5, 0.25, 0.15, 0.1])
    se = est[:, :4].std(0, ddof=1) / math.sqrt(seeds)
    assert np.all(np.abs(est[:, :4].mean(0) - truth) <= Z * se)
    assert np.all(est[:, 4:] == 0)  # items beyond d are masked


def test_one_compile_across_eps_and_d_and_masking():
    config = _config("oue", users=100, path="counts")
    algorithm = online_frequency(config)
    rec = record.last()
    first = simulate(
        algorithm,
        product_grid(frequency_params(config, 1.0), eps=[1.0, 2.0], d=[2, 16]),
        make_key(0),
        2,
        num_seeds=3,
        grid_ndim=2,
        record=rec,
    )
    again = simulate(
        algorithm,
        product_grid(frequency_params(config, 1.0), eps=[0.5, 3.0], d=[3, 9]),
        make_key(1),
        2,
        num_seeds=3,
        grid_ndim=2,
        record=rec,
    )
    assert first.info.compilations > 0
    assert again.info.compilations == 0  # new eps and d values: the kernels are reused
    est = again.record.estimate  # (eps, d, seeds, D)
    assert np.all(est[:, 0, :, 3:] == 0) and np.all(est[:, 1, :, 9:] == 0)
    proj = again.record.projected
    np.testing.assert_allclose(proj.sum(-1), 1.0, rtol=1e-5)
    assert np.all(proj >= 0) and np.all(proj[:, 0, :, 3:] == 0)


@pytest.mark.parametrize("oracle", ORACLES)
def test_privacy_event_is_the_oracles_claim(oracle):
    config = _config(oracle)
    d = 16 if oracle == "ss" else 9
    event = online_frequency(config).privacy_event(frequency_params(config, 1.25, d=d))
    expected = {
        "grr": "KaryRandomizedResponseEvent",
        "sue": "UnaryEncodingEvent",
        "oue": "UnaryEncodingEvent",
        "blh": "LocalHashingEvent",
        "olh": "LocalHashingEvent",
        "hr": "HadamardResponseEvent",
        "ss": "SubsetSelectionEvent",
    }[oracle]
    assert type(event).__name__ == expected
    assert float(epsilon(event, 0.0)) == pytest.approx(1.25, rel=1e-5)
    if oracle == "olh":
        assert float(event.g) == round(math.exp(1.25) + 1)


def test_validate_names_the_leaf():
    config = _config("grr", users=10)
    algorithm = online_frequency(config)
    good = frequency_params(config, 1.0, d=5)
    with pytest.raises(ValueError, match=r"params\.eps"):
        algorithm.validate(good._replace(eps=jnp.float32(-1.0)), None)
    with pytest.raises(ValueError, match=r"params\.d"):
        algorithm.validate(good._replace(d=jnp.int32(17)), None)
    with pytest.raises(ValueError, match=r"params\.eps must be at most"):
        algorithm.validate(good._replace(eps=jnp.float32(30.0)), None)  # beyond 32-bit K-RR
    with pytest.raises(ValueError, match="positive weight"):
        algorithm.validate(good._replace(weights=jnp.zeros(16).at[10].set(1.0)), None)
    with pytest.raises(ValueError, match="inputs"):
        algorithm.validate(good, np.full((2, 10), 5))  # items must be < d = 5
    with pytest.raises(ValueError, match=r"inputs must be the users' items"):
        algorithm.validate(good, np.zeros((2, 9), int))
    ss = _config("ss")
    with pytest.raises(ValueError, match="max_items"):
        online_frequency(ss).validate(
            frequency_params(ss, 1.0, d=16)._replace(d=jnp.int32(8)), None
        )
    with pytest.raises(ValueError, match="oracle"):
        OnlineFrequencyConfig(max_items=8, oracle="rappor")
    with pytest.raises(ValueError, match="subset_size"):
        OnlineFrequencyConfig(max_items=8, oracle="ss")


def test_simulate_refuses_a_bad_grid_point():
    config = _config("hr", users=10)
    params = product_grid(frequency_params(config, 1.0), eps=[1.0, -0.5])
    with pytest.raises(ValueError, match=r"params\.eps.*grid point \(1,\)"):
        simulate(online_frequency(config), params, make_key(0), 1, grid_ndim=1)


@pytest.mark.parametrize("oracle", _fast_one([("grr",), ("oue",), ("olh",), ("hr",)], ("oue",)))
def test_traced_invalid_or_unchecked_inf_budget_fails_closed(oracle):
    config = _config(oracle, users=50)
    algorithm = online_frequency(config)
    base = frequency_params(config, 1.0, d=6)

    @jax.jit
    def run(eps):
        return rollout(algorithm, base._replace(eps=eps), make_key(0), 2)[1]

    for bad in (jnp.nan, -1.0, jnp.inf):  # a traced inf was never checked: no "no noise"
        out = run(jnp.float32(bad))
        assert bool(jnp.all(jnp.isnan(out.estimate))), bad
    assert bool(jnp.all(jnp.isfinite(run(jnp.float32(1.0)).estimate)))


@pytest.mark.parametrize("oracle", _fast_one([("grr",), ("sue",)], ("grr",)))
def test_concrete_inf_budget_is_no_noise(oracle):
    """eps = inf written in the params grid (checked by simulate): exact frequencies (OUE keeps
    p = 1/2 and Hadamard response a uniform index of C_v at eps = inf: noisy by design)."""
    config = _config(oracle, users=64)
    items = (np.arange(64) % 4)[None, :]
    out = simulate(
        online_frequency(config),
        frequency_params(config, float("inf"), d=4),
        make_key(0),
        1,
        inputs=items,
        record=record.last(lambda o: o.estimate),
    )
    np.testing.assert_allclose(out.record[0, :4], 0.25)


@pytest.mark.slow
def test_blocks_do_not_change_the_law():
    """The reports path in blocks of 7 users (with a partial last block) gives the same
    expected error as one block."""
    config = _config("sue", users=100, block=7)
    assert config.num_blocks == 15
    seeds = 300
    out = simulate(
        online_frequency(config),
        frequency_params(config, 1.0, d=10),
        make_key(5),
        1,
        num_seeds=seeds,
        record=record.last(),
        keep_state=False,
    )
    err = np.asarray(out.record.squared_error, np.float64)
    se = err.std(ddof=1) / math.sqrt(seeds)
    assert abs(err.mean() - _expected("sue", 1.0, 10, 100)) <= Z * se


@pytest.mark.slow
def test_reports_count_every_user_once():
    config = _config("olh", users=100, block=30)
    state, _ = rollout(
        online_frequency(config), frequency_params(config, 2.0, d=12), make_key(0), 3
    )
    assert int(state.reports) == 300 and int(state.truth.sum()) == 300
    assert bool(state.valid)


@pytest.mark.slow
@pytest.mark.parametrize("oracle,path", [("olh", "reports"), ("oue", "counts")])
def test_more_oracles_conform(oracle, path):
    """The conformance checks of tests/conformance (which runs the K-ary RR case in the fast
    suite) on local hashing's reports path and OUE's counts path."""
    from ldpjax.testing import check_conformance
    from tests.conformance.cases_frequency import slow_cases

    (case,) = [c for c in slow_cases() if c.name == f"frequency/online_{oracle}_{path}"]
    check_conformance(case, num_seeds=3)
