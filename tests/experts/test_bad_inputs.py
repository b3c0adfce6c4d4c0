"""Bad inputs to the experts public API: a ValueError/TypeError that names the argument, never a
JAX broadcasting or reduction error (issue 9, item 7)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.experts import (
    AdaBatchConfig,
    FTPLConfig,
    adabatch_params,
    amplified_event,
    bernoulli_gains,
    ftpl_params,
    leader_family,
    learner_set,
    meta_params,
    noise_scale,
    optimal_learning_rate,
    privatize_gains,
    rw_adabatch,
    rw_ftpl,
    rw_meta_algorithm,
    tree_hedge_params,
)
from ldpjax.experts import agarwal_singh as AS
from ldpjax.experts import rw_meta as M

N = 3
KEY = jax.random.key(0)
HALF = jnp.full((N,), 0.5)
GAINS = jnp.full((5, N), 0.5)
LEARNERS = learner_set(leader_family())
FTPL = rw_ftpl(FTPLConfig(N))
ADA = rw_adabatch(AdaBatchConfig(N))
META = rw_meta_algorithm(LEARNERS, N)
TREE = AS.tree_hedge(AS.TreeHedgeConfig(N, 5))


CASES = [
    # privatize_gains: the one release
    ("gains above 1", lambda: privatize_gains(KEY, 5 * jnp.ones(3), 1.0), ValueError, "gains"),
    ("gains below 0", lambda: privatize_gains(KEY, -HALF, 1.0), ValueError, "gains"),
    ("gains NaN", lambda: privatize_gains(KEY, HALF.at[0].set(jnp.nan), 1.0), ValueError, "gains"),
    ("gains 2-d", lambda: privatize_gains(KEY, GAINS, 1.0), ValueError, "gains"),
    ("gains empty", lambda: privatize_gains(KEY, jnp.zeros((0,)), 1.0), ValueError, "gains"),
    ("gains string", lambda: privatize_gains(KEY, "0.5", 1.0), TypeError, "gains"),
    ("gains str array", lambda: privatize_gains(KEY, np.array(["a", "b"]), 1.0), TypeError, "gains"),
    ("gains complex", lambda: privatize_gains(KEY, np.array([0.5 + 1j, 0.2]), 1.0), TypeError,
     "gains"),
    ("release mu = 0", lambda: privatize_gains(KEY, HALF, 0.0), ValueError, "mu"),
    ("release mu NaN", lambda: privatize_gains(KEY, HALF, np.nan), ValueError, "mu"),
    ("release mu string", lambda: privatize_gains(KEY, HALF, "1"), ValueError, "mu"),
    ("release sensitivity 0", lambda: privatize_gains(KEY, HALF, 1.0, 0.0), ValueError,
     "sensitivity"),
    ("release granularity", lambda: privatize_gains(KEY, HALF, 1.0, granularity=0.3), ValueError,
     "granularity"),
    # params constructors
    ("ftpl mu -inf", lambda: ftpl_params(-np.inf), ValueError, "mu"),
    ("ftpl mu string", lambda: ftpl_params("a"), ValueError, "mu"),
    ("ftpl sensitivity inf", lambda: ftpl_params(1.0, np.inf), ValueError, "sensitivity"),
    ("adabatch alpha NaN", lambda: adabatch_params(1.0, np.nan), ValueError, "alpha"),
    ("adabatch shape mismatch", lambda: adabatch_params([1.0, 2.0], [0.1, 0.2, 0.3]), ValueError,
     "^mu, alpha must broadcast"),
    ("ftpl shape mismatch", lambda: ftpl_params([1.0, 2.0], [1.0, 2.0, 3.0]), ValueError,
     "^mu, sensitivity must broadcast"),
    ("tree shape mismatch", lambda: tree_hedge_params([1.0, 2.0], [0.1, 0.2, 0.3]), ValueError,
     "^node_sd, learning_rate must broadcast"),
    ("meta learners string", lambda: meta_params(1.0, "ridge"), TypeError, "learners"),
    ("meta sensitivity negative", lambda: meta_params(1.0, LEARNERS, -1.0), ValueError,
     "sensitivity"),
    ("tree node_sd negative", lambda: tree_hedge_params(-1.0, 0.1), ValueError, "node_sd"),
    ("tree learning_rate 0", lambda: tree_hedge_params(1.0, 0.0), ValueError, "learning_rate"),
    # configs
    ("ftpl n float", lambda: FTPLConfig(2.5), ValueError, "num_experts"),
    ("ftpl n = 1", lambda: FTPLConfig(1), ValueError, "num_experts"),
    ("ftpl granularity not power of 2", lambda: FTPLConfig(3, granularity=0.3), ValueError,
     "granularity"),
    ("ftpl sensitivity is not config", lambda: FTPLConfig(3, sensitivity=1.0), TypeError,
     "sensitivity"),
    ("adabatch fast not bool", lambda: AdaBatchConfig(3, fast="yes"), TypeError, "fast"),
    ("adabatch max_batch 0", lambda: AdaBatchConfig(3, max_batch=0), ValueError, "max_batch"),
    ("meta no learners", lambda: M.MetaConfig(3, ()), ValueError, "learners"),
    ("meta learners not a set", lambda: rw_meta_algorithm("x", 3), TypeError, "learners"),
    ("meta n = 1", lambda: rw_meta_algorithm(LEARNERS, 1), ValueError, "num_experts"),
    ("tree rounds 0", lambda: AS.TreeHedgeConfig(3, 0), ValueError, "num_rounds"),
    # validate(params, inputs): the engine's hook
    ("validate gains out of range", lambda: FTPL.validate(ftpl_params(1.0), 10 * GAINS), ValueError,
     "inputs"),
    ("validate wrong n", lambda: FTPL.validate(ftpl_params(1.0), jnp.full((5, N + 1), 0.5)),
     ValueError, "inputs"),
    ("validate 1-d gains", lambda: ADA.validate(adabatch_params(1.0), HALF), ValueError, "inputs"),
    ("validate no rounds", lambda: ADA.validate(adabatch_params(1.0), jnp.zeros((0, N))),
     ValueError, "inputs"),
    ("validate string gains", lambda: META.validate(meta_params(1.0, LEARNERS),
                                                    np.full((5, N), "a")), TypeError, "inputs"),
    ("validate missing gains", lambda: META.validate(meta_params(1.0, LEARNERS), None), ValueError,
     "inputs"),
    ("validate grid with a NaN mu", lambda: FTPL.validate(ftpl_params(1.0)._replace(
        mu=jnp.asarray([1.0, np.nan])), GAINS), ValueError, "mu"),
    ("validate adabatch alpha", lambda: ADA.validate(adabatch_params(1.0)._replace(
        alpha=jnp.asarray(0.0)), GAINS), ValueError, "alpha"),
    ("validate tree gains", lambda: TREE.validate(AS.min_noise_setting(1.0, N, 5),
                                                  GAINS.at[0, 0].set(-0.1)), ValueError, "inputs"),
    ("validate tree -0.0 sd", lambda: TREE.validate(AS.min_noise_setting(1.0, N, 5)._replace(
        node_sd=jnp.asarray(-0.0)), GAINS), ValueError, "node_sd"),
    # helpers
    ("noise_scale mu NaN", lambda: noise_scale(np.nan, 4), ValueError, "mu"),
    ("release_scale mu -inf", lambda: M.release_scale(M.MetaConfig(N, LEARNERS.learners), -np.inf),
     ValueError, "mu"),
    ("lambda_max_ratio eta < 0", lambda: M.lambda_max_ratio(jnp.eye(2), -1.0, 3), ValueError, "eta"),
    ("min noise sensitivity < 0", lambda: AS.min_noise_setting(1.0, 4, 8, sensitivity=-1.0),
     ValueError, "sensitivity"),
    ("min noise sensitivity string", lambda: AS.min_noise_setting(1.0, 4, 8, sensitivity="1"),
     TypeError, "sensitivity"),
    ("optimal rate sd < 0", lambda: optimal_learning_rate(-1.0, 4, 8), ValueError, "node_sd"),
    ("amplified_event t = 0", lambda: amplified_event(1.0, 0.0, 10, 0.01), ValueError, "t"),
    ("bernoulli gap too large", lambda: bernoulli_gains(KEY, 10, 3, 1.5), ValueError, "gap"),
]


@pytest.mark.parametrize("call, error, name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_naming_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_enough_cases():
    assert len(CASES) >= 20
