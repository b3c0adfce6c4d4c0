"""``release_run``: one run over real data with a secure key, each record read once, its claim.

And ``simulate`` stays the simulation driver: with a seeded key it replays records and inputs
in every run; with a secure key it refuses several seeds or grid points.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.accounting as acc
import ldpjax.quantile as Q
from ldpjax import mechanisms as M
from ldpjax.engine import Algorithm, make_key, record, release_run, simulate

ROWS = [np.array([3.5, -1.0, 7.25, 0.0]), np.array([10.0, 30.0, 20.0, 40.0]),
        np.array([0.5, 1.5, -0.5, 2.5])]  # 4 records per client
RATES = np.array([0.3, 0.5, 0.8])


def _echo():
    """A step that releases its input row and counts its calls (a probe of the engine's reads)."""

    def step(params, count, inputs, key):
        del params, key
        return count + 1, {"row": inputs, "count": count + 1}

    return Algorithm(lambda params, key: jnp.int32(0), step,
                     privacy_event=lambda params: acc.GaussianEvent(1.0))


ECHO = _echo()
ROWS_IN = jnp.arange(12.0).reshape(4, 3)


SEEDED = {"make_key(0)": lambda: make_key(0), "jax.random.key(0)": lambda: jax.random.key(0)}


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_release_run_refuses_seeded_keys(name):
    with pytest.raises(ValueError, match=r"release_run: key must come from "
                                         r"ldpjax\.mechanisms\.secure_key\(\)"):
        release_run(ECHO, {}, SEEDED[name](), inputs=ROWS_IN)


def test_release_run_has_one_run_only():
    params = inspect.signature(release_run).parameters
    assert not {"num_seeds", "grid_ndim", "rng", "seed_offset", "runner"} & set(params)
    with pytest.raises(TypeError):
        release_run(ECHO, {}, M.secure_key(), inputs=ROWS_IN, num_seeds=2)  # type: ignore


def test_release_run_reads_each_input_row_once_simulate_replays_them():
    out = release_run(ECHO, {}, M.secure_key(), inputs=ROWS_IN, record=record.every_step())
    np.testing.assert_array_equal(out.record["row"], ROWS_IN)  # one run: every row once
    np.testing.assert_array_equal(out.record["count"], np.arange(1, 5))
    assert out.info.num_seeds == 1 and out.info.rng == "ldpjax_secure128"
    assert out.event == acc.GaussianEvent(1.0)
    # simulation with a seeded key: every seed reads every row again (replayed)
    sim = simulate(ECHO, {}, make_key(0), inputs=ROWS_IN, num_seeds=3, record=record.every_step())
    np.testing.assert_array_equal(sim.record["row"], np.broadcast_to(ROWS_IN, (3, 4, 3)))


def test_release_run_over_records_reads_each_once_and_claims_one_use():
    clients = Q.record_clients(ROWS)  # max_uses=1: a stream may read each record once
    params = Q.quantile_params(0.5, RATES, clients, weights=[1 / 3, 1 / 3, 1 / 3])
    config = Q.LocalSGDConfig(4, Q.C1)  # t_T = 4 reports per client: each record once
    algorithm = Q.local_sgd(config)
    key = M.secure_key()
    out = release_run(algorithm, params, key, config.num_rounds,
                      record=record.last(lambda o: o.estimate))
    assert np.isfinite(out.record)  # every report read a record (a reread would read NaN)
    # the claim: each client's record once, randomized response at its own r_k
    assert isinstance(out.event, acc.ParallelEvent)
    assert [type(e) for e in out.event.events] == [acc.RandomizedResponseEvent] * 3
    np.testing.assert_allclose([float(e.r) for e in out.event.events], RATES, rtol=1e-6)
    # the same data under simulate with the secure key and two seeds: refused
    with pytest.raises(ValueError, match=r"num_seeds=2 .*once-per-record claim.*release_run"):
        simulate(algorithm, params, key, config.num_rounds, num_seeds=2)
    # and a stream longer than the records is refused before anything runs
    with pytest.raises(ValueError, match=r"holds 4 records but the stream requests 5"):
        release_run(Q.local_sgd(Q.LocalSGDConfig(5, Q.C1)), params, key, 5)


def test_release_run_checks_the_algorithm_and_its_inputs():
    from ldpjax import experts

    bare = Algorithm(ECHO.init, ECHO.step)  # no privacy_event: no claim
    with pytest.raises(ValueError, match="states no privacy_event"):
        release_run(bare, {}, M.secure_key(), inputs=ROWS_IN)
    ftpl = experts.rw_ftpl(experts.FTPLConfig(3, granularity=2**-10))
    with pytest.raises(ValueError, match=r"inputs must be in \[0, 1\]"):  # validate: gains
        release_run(ftpl, experts.ftpl_params(1.0), M.secure_key(), inputs=ROWS_IN)
