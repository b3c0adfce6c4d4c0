"""Events validate: no accountant returns a number for an invalid event.

Table-driven over event types x invalid values x {concrete: ``ValueError`` naming the parameter,
traced under ``jit``: NaN, gradient: NaN} for ``delta``, ``epsilon`` and ``tradeoff``; booleans
raise even when traced (their dtype is static). Then the no-privacy table (epsilon = inf,
delta = 1), tiny deltas (down to 1e-300, also in float32) and tiny budgets (mu = 1e-40), which
give finite numbers, never NaN.

Each row compiles once: the invalid values and one valid control go through a single
``jit(vmap(value_and_grad))``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.accounting as acc
from ldpjax.accounting.protocol import name_of

NAN = math.nan
MIX_W = jnp.array([0.5, 0.5])
DG = acc.DiscreteGaussianEvent
# (row id, event of the number x, invalid values, a valid value, parameter name, accountants)
ALL = ("delta", "epsilon", "tradeoff")
APPROX = ("delta", "epsilon")  # no tradeoff for zCDP-accounted events
ROWS = [
    ("gaussian mu", lambda x: acc.GaussianEvent(x), [0.0, -1.0, NAN], 1.0, "mu", ALL),
    ("dg sigma", lambda x: DG(x, 3.0), [-1.0, NAN, math.inf], 4.0, "sigma", APPROX),
    ("dg shift", lambda x: DG(4.0, x), [-1.0, NAN, 0.5], 3.0, "shift", APPROX),
    ("dg dim 2 sigma", lambda x: DG(x, 3.0, 2), [-1.0, NAN], 4.0, "sigma", APPROX),
    ("rr r", lambda x: acc.RandomizedResponseEvent(x), [0.0, -1.0, NAN, 1.5], 0.5, "r", ALL),
    ("krr xi", lambda x: acc.KaryRandomizedResponseEvent(x, 3), [-1.0, NAN], 1.0, "xi", ALL),
    ("krr k", lambda x: acc.KaryRandomizedResponseEvent(1.0, x), [1.0, 2.5, NAN], 3.0, "k", ALL),
    ("laplace eps", lambda x: acc.LaplaceEvent(x), [-1.0, NAN], 1.0, "eps", ALL),
    (
        "mixture mus",
        lambda x: acc.GaussianMixtureEvent(jnp.stack([x, 1.0]), MIX_W),
        [0.0, -1.0, NAN],
        2.0,
        "mus",
        ALL,
    ),
    (
        "mixture weights",
        lambda x: acc.GaussianMixtureEvent(jnp.array([1.0, 2.0]), jnp.stack([x, 1.0 - x])),
        [-0.5, NAN],
        0.25,
        "weights",
        ALL,
    ),
    (
        "mixture weights sum",
        lambda x: acc.GaussianMixtureEvent(jnp.array([1.0, 2.0]), jnp.stack([x, 0.5])),
        [0.9, 0.1],
        0.5,
        "weights",
        ALL,
    ),
    (
        "composed gaussian",
        lambda x: acc.ComposedEvent((acc.GaussianEvent(x), acc.GaussianEvent(1.0))),
        [0.0, -1.0, NAN],
        1.0,
        "events[0].mu",
        ALL,
    ),
    (
        "composed zcdp",
        lambda x: acc.ComposedEvent((acc.GaussianEvent(1.0), DG(x, 3.0))),
        [-1.0, NAN],
        4.0,
        "events[1].sigma",
        APPROX,
    ),
    (
        "composed pure",
        lambda x: acc.ComposedEvent(
            (acc.KaryRandomizedResponseEvent(1.0, 3), acc.RandomizedResponseEvent(x))
        ),
        [0.0, -1.0, NAN],
        0.5,
        "events[1].r",
        ALL,
    ),
    (
        "composed no privacy",
        lambda x: acc.ComposedEvent((acc.NoPrivacyEvent(), acc.GaussianEvent(x))),
        [0.0, -1.0, NAN],
        1.0,
        "events[1].mu",
        ALL,
    ),
    (
        "parallel",
        lambda x: acc.ParallelEvent((acc.RandomizedResponseEvent(0.5), acc.GaussianEvent(x))),
        [0.0, -1.0, NAN],
        1.0,
        "events[1].mu",
        ALL,
    ),
    (
        "self-composed mu",
        lambda x: acc.SelfComposedEvent(acc.GaussianEvent(x), 3),
        [0.0, -1.0, NAN],
        1.0,
        "event.mu",
        ALL,
    ),
    (
        "self-composed count",
        lambda x: acc.SelfComposedEvent(acc.GaussianEvent(1.0), x),
        [0.0, -1.0, 1.5, NAN],
        2.0,
        "count",
        ALL,
    ),
]
ACCOUNTANTS = {
    "delta": lambda e: acc.delta(e, 1.0),
    "epsilon": lambda e: acc.epsilon(e, 1e-5),
    "tradeoff": lambda e: acc.tradeoff(e, 0.1),
}
CASES = [(row, name) for row in ROWS for name in row[5]]
IDS = [f"{row[0]}-{name}" for row, name in CASES]


@pytest.mark.parametrize("row,name", CASES, ids=IDS)
def test_invalid_concrete_raises_naming_the_parameter(row, name):
    _, build, bad, good, param, _ = row
    account = ACCOUNTANTS[name]
    mixture = isinstance(build(good), acc.GaussianMixtureEvent)  # jnp.stack turns True into 1.0
    for x in [*bad] if mixture else [*bad, True]:
        with pytest.raises(ValueError, match=rf"(^|\.){_escape(param)}\b.*must be"):
            account(build(x))


def _escape(name: str) -> str:
    return name.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")


# Traced: rows merged where one event type has several parameters (x is a vector), and the
# accountant's own argument (eps, delta, alpha) is the last entry of x — one compile per row
# and accountant covers invalid parameters, invalid arguments and a valid control.
GAUSS1 = acc.GaussianEvent(1.0)
TRACED = [
    ("gaussian", lambda x: acc.GaussianEvent(x[0]), [[0.0], [-1.0], [NAN]], [1.0], ALL, [math.inf]),
    (
        "dg",
        lambda x: DG(x[0], x[1]),
        [[-1.0, 3.0], [NAN, 3.0], [math.inf, 3.0], [4.0, -1.0], [4.0, NAN], [4.0, 0.5]],
        [4.0, 3.0],
        APPROX,
        [0.0, 3.0],
    ),
    ("dg dim 2", lambda x: DG(x[0], x[1], 2), [[-1.0, 3.0], [4.0, 0.5]], [4.0, 3.0], APPROX),
    (
        "rr",
        lambda x: acc.RandomizedResponseEvent(x[0]),
        [[0.0], [-1.0], [NAN], [1.5]],
        [0.5],
        ALL,
        [1.0],
    ),
    (
        "krr",
        lambda x: acc.KaryRandomizedResponseEvent(x[0], x[1]),
        [[-1.0, 3.0], [NAN, 3.0], [1.0, 1.0], [1.0, 2.5], [1.0, NAN]],
        [1.0, 3.0],
        ALL,
        [math.inf, 3.0],
    ),
    ("laplace", lambda x: acc.LaplaceEvent(x[0]), [[-1.0], [NAN]], [1.0], ALL, [math.inf]),
    (
        "mixture",
        lambda x: acc.GaussianMixtureEvent(jnp.stack([x[0], 1.0]), jnp.stack([x[1], x[2]])),
        [
            [0.0, 0.5, 0.5],
            [-1.0, 0.5, 0.5],
            [NAN, 0.5, 0.5],
            [2.0, -0.5, 1.5],
            [2.0, NAN, 0.5],
            [2.0, 0.9, 0.5],
            [2.0, 0.1, 0.5],
        ],
        [2.0, 0.25, 0.75],
        ALL,
    ),
    (
        "nested",
        lambda x: acc.ParallelEvent(
            (
                acc.SelfComposedEvent(acc.ComposedEvent((acc.GaussianEvent(x[0]), GAUSS1)), x[1]),
                acc.RandomizedResponseEvent(x[2]),
            )
        ),
        [
            [0.0, 2.0, 0.5],
            [-1.0, 2.0, 0.5],
            [NAN, 2.0, 0.5],
            [1.0, 0.0, 0.5],
            [1.0, 1.5, 0.5],
            [1.0, NAN, 0.5],
            [1.0, 2.0, -1.0],
        ],
        [1.0, 2.0, 0.5],
        ALL,
        [math.inf, 2.0, 0.5],
    ),
    (
        "composed zcdp",
        lambda x: acc.ComposedEvent((GAUSS1, DG(x[0], 3.0))),
        [[-1.0], [NAN]],
        [4.0],
        APPROX,
    ),
    (
        "composed pure",
        lambda x: acc.ComposedEvent(
            (acc.KaryRandomizedResponseEvent(1.0, 3), acc.RandomizedResponseEvent(x[0]))
        ),
        [[0.0], [-1.0], [NAN]],
        [0.5],
        ALL,
    ),
    (
        "composed no privacy",
        lambda x: acc.ComposedEvent((acc.NoPrivacyEvent(), acc.GaussianEvent(x[0]))),
        [[0.0], [-1.0], [NAN]],
        [1.0],
        ALL,
    ),
]
ARGUMENTS = {  # accountant: (call, invalid arguments, a valid one)
    "delta": (acc.delta, [-1.0, NAN], 1.0),
    "epsilon": (acc.epsilon, [-0.1, 1.0, NAN], 1e-5),
    "tradeoff": (acc.tradeoff, [-0.1, 1.5, NAN], 0.1),
}
# the compositions' traced checks compile a PLD composition (about 15 s each on two cores): in
# the slow suite; the fast one keeps every single-release row and the composed Gaussian rows
SLOW_TRACED = ("composed zcdp", "composed pure")
TRACED_CASES = [pytest.param(row, name, id=f"{row[0]}-{name}",
                             marks=[pytest.mark.slow] if row[0] in SLOW_TRACED else [])
                for row in TRACED for name in row[4]]
NO_PRIVACY_VALUE = {"delta": 1.0, "epsilon": math.inf, "tradeoff": 0.0}


@pytest.mark.parametrize("row,name", TRACED_CASES)
def test_invalid_traced_gives_nan_value_and_gradient(row, name):
    _, build, bad, good, _, *free = row
    call, bad_args, good_arg = ARGUMENTS[name]
    xs = [[*b, good_arg] for b in bad] + [[*good, a] for a in bad_args]
    xs += [[*f, good_arg] for f in free] + [[*good, good_arg]]
    values, grads = jax.jit(jax.vmap(jax.value_and_grad(lambda x: call(build(x[:-1]), x[-1]))))(
        jnp.asarray(xs, jnp.float32)
    )
    values, grads = np.asarray(values), np.asarray(grads)
    n_bad = len(xs) - 1 - len(free)
    assert np.all(np.isnan(values[:n_bad])), values
    assert np.all(np.isnan(grads[:n_bad])), grads  # every entry: the parameters and the argument
    if free:  # a traced no-privacy budget (mu = inf, sigma = 0, r = 1, xi = inf)
        assert values[n_bad] == NO_PRIVACY_VALUE[name], values
    # the valid control is a number (inf for the composition with a no-privacy part)
    assert not np.isnan(values[-1]) and np.all(np.isfinite(grads[-1])), (values[-1], grads[-1])


@pytest.mark.parametrize("row", ROWS[:3] + ROWS[4:6], ids=[r[0] for r in ROWS[:3] + ROWS[4:6]])
def test_traced_boolean_budget_raises(row):
    _, build, _, _, param, _ = row
    with pytest.raises(ValueError, match="not a boolean"):
        jax.jit(lambda b: acc.delta(build(b), 1.0))(jnp.asarray(True))
    with pytest.raises(ValueError, match=_escape(param)):
        acc.delta(build(np.array([True, False])), 1.0)


@pytest.mark.parametrize("name", ["delta", "epsilon", "tradeoff"])
def test_invalid_concrete_arguments(name):
    call, bad_args, _ = ARGUMENTS[name]
    word = {"delta": "eps", "epsilon": "delta", "tradeoff": "alpha"}[name]
    for event in (GAUSS1, acc.RandomizedResponseEvent(0.5)):
        for x in [*bad_args, True]:
            with pytest.raises(ValueError, match=f"^{word} must be"):
                call(event, x)


def test_boolean_mixture_arrays_raise():
    with pytest.raises(ValueError, match="^mus must be a number"):
        acc.delta(acc.GaussianMixtureEvent(jnp.array([True, True]), MIX_W), 1.0)
    with pytest.raises(ValueError, match="^weights must be a number"):
        acc.delta(acc.GaussianMixtureEvent(jnp.array([1.0, 2.0]), jnp.array([True, False])), 1.0)


def test_issue_examples():
    # the composed mu sqrt(1 + 1) used to hide the invalid part
    with pytest.raises(ValueError, match=r"events\[0\]\.mu must be in \(0, inf\]; got -1"):
        acc.epsilon(acc.ComposedEvent((acc.GaussianEvent(-1.0), acc.GaussianEvent(1.0))), 1e-5)
    # negative traced mixture weights used to give a negative delta
    out = jax.jit(lambda w: acc.delta(acc.GaussianMixtureEvent(jnp.array([1.0, 2.0]), w), 1.0))(
        jnp.array([-0.5, 1.5])
    )
    assert math.isnan(float(out))
    with pytest.raises(ValueError, match="^r must be a number in \\(0, 1\\], not a boolean"):
        acc.delta(acc.RandomizedResponseEvent(True), 1.0)


# six of each, as TINY_DELTAS: the compiled accountants are shared between the tests
NP_DELTAS = [0.0, 1e-300, 1e-5, 0.1, 0.5, 0.9]
NP_EPS = [0.0, 0.5, 1.0, 5.0, 50.0, 500.0]
NO_PRIVACY = [
    acc.NoPrivacyEvent(),
    acc.GaussianEvent(math.inf),
    acc.DiscreteGaussianEvent(0.0, 3.0),
    acc.DiscreteGaussianEvent(0.0, 1.0, 2),
    acc.RandomizedResponseEvent(1.0),
    acc.KaryRandomizedResponseEvent(math.inf, 5),
    acc.LaplaceEvent(math.inf),
    acc.ComposedEvent((acc.GaussianEvent(1.0), acc.NoPrivacyEvent())),
    acc.ComposedEvent((acc.GaussianEvent(1.0), acc.GaussianEvent(math.inf))),
    acc.ComposedEvent((acc.GaussianEvent(1.0), acc.DiscreteGaussianEvent(0.0, 2.0))),
    acc.ComposedEvent((acc.RandomizedResponseEvent(0.5), acc.RandomizedResponseEvent(1.0))),
    acc.ComposedEvent(
        (acc.NoPrivacyEvent(), acc.GaussianMixtureEvent(jnp.array([1.0]), jnp.array([1.0])))
    ),
    acc.ParallelEvent((acc.GaussianEvent(1.0), acc.NoPrivacyEvent())),
    acc.SelfComposedEvent(acc.GaussianEvent(math.inf), 2),
    acc.SelfComposedEvent(acc.RandomizedResponseEvent(1.0), 3),
]


def _slow_if_mixed(events):
    """Compositions of a Gaussian with a discrete Gaussian compile a PLD composition (about 10 s
    on two cores): in the slow suite, the other events in the fast one."""
    return [pytest.param(e, id=name_of(e), marks=[pytest.mark.slow] if name_of(e) in (
        "ComposedEvent(GaussianEvent, DiscreteGaussianEvent)",
        "SelfComposedEvent(RandomizedResponseEvent)") else []) for e in events]


@pytest.mark.parametrize("event", _slow_if_mixed(NO_PRIVACY))
def test_no_privacy_is_epsilon_inf_delta_one(event):
    assert np.all(np.asarray(acc.epsilon(event, np.array(NP_DELTAS))) == math.inf)
    assert np.all(np.asarray(acc.delta(event, np.array(NP_EPS))) == 1.0)


def test_zero_shift_releases_nothing():
    # shift 0: the release does not depend on the record (also without noise)
    assert np.all(
        np.asarray(acc.epsilon(acc.DiscreteGaussianEvent(4.0, 0.0), np.array(TINY_DELTAS))) == 0.0
    )
    assert np.all(
        np.asarray(acc.delta(acc.DiscreteGaussianEvent(0.0, 0.0, 2), np.array(NP_EPS))) == 0.0
    )


TINY_EVENTS = [
    acc.GaussianEvent(1.0),
    acc.GaussianEvent(5.0),
    acc.DiscreteGaussianEvent(4.0, 3.0),
    acc.DiscreteGaussianEvent(40.0, 30.0),
    acc.DiscreteGaussianEvent(4.0, 3.0, 2),
    acc.RandomizedResponseEvent(0.5),
    acc.KaryRandomizedResponseEvent(1.0, 4),
    acc.LaplaceEvent(0.5),
    acc.GaussianMixtureEvent(jnp.array([1.0, 2.0]), jnp.array([0.5, 0.5])),
    acc.ComposedEvent((acc.GaussianEvent(1.0), acc.DiscreteGaussianEvent(4.0, 3.0))),
    acc.ComposedEvent((acc.RandomizedResponseEvent(0.5), acc.RandomizedResponseEvent(0.2))),
    acc.SelfComposedEvent(acc.GaussianEvent(0.5), 4),
    acc.ParallelEvent((acc.GaussianEvent(1.0), acc.DiscreteGaussianEvent(4.0, 3.0))),
]
TINY_DELTAS = [1e-30, 1e-38, 1e-39, 1e-45, 1e-100, 1e-300]


@pytest.mark.parametrize("event", _slow_if_mixed(TINY_EVENTS))
def test_tiny_deltas_give_finite_epsilons_in_float32_and_float64(event):
    deltas = np.array(TINY_DELTAS)
    eps32 = np.asarray(acc.epsilon(event, deltas))
    # float32 unless the whole run is in x64 (JAX_ENABLE_X64=1): then both halves are float64
    assert eps32.dtype == (np.float64 if jax.config.jax_enable_x64 else np.float32)
    assert np.all(np.isfinite(eps32)) and np.all(eps32 >= 0), eps32
    assert np.all(np.diff(eps32) >= -1e-4 * eps32[1:]), eps32  # smaller delta, larger eps
    if isinstance(event, acc.GaussianMixtureEvent):
        # p delta_2(eps) <= delta(eps) <= delta_2(eps) for tiny deltas (the mu = 2 part dominates)
        upper = np.asarray(acc.epsilon(acc.GaussianEvent(2.0), deltas))
        lower = np.asarray(acc.epsilon(acc.GaussianEvent(2.0), 2.0 * deltas))
        assert np.all((eps32 <= upper * (1 + 1e-5)) & (eps32 >= lower * (1 - 1e-5))), eps32
        return
    with jax.enable_x64(True):
        eps64 = np.asarray(acc.epsilon(event, deltas))
        # 'pld': a composition of discrete parts (e.g. RR + RR) is now read off its PLD, whose
        # profile is piecewise with flat stretches like a pure one
        # LaplaceEvent: 1 - e^((e - eps0)/2) is below float64's resolution for these deltas, so
        # eps(d) rounds to eps0, where the profile is 0 (flat from there on)
        flat = acc.route(event) in ("pure", "parallel", "pld") or isinstance(
            event, (acc.RandomizedResponseEvent, acc.KaryRandomizedResponseEvent, acc.LaplaceEvent))
        if not flat:
            # delta(eps(d)) = d where the profile is continuous (pure profiles are flat near 0)
            np.testing.assert_allclose(np.asarray(acc.delta(event, eps64)), deltas, rtol=1e-6)
    np.testing.assert_allclose(eps32, eps64, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize(
    "event",
    [
        acc.GaussianEvent(1e-40),
        acc.GaussianEvent(1e-300),
        acc.RandomizedResponseEvent(1e-40),
        acc.KaryRandomizedResponseEvent(1e-40, 3),
        acc.GaussianMixtureEvent(np.array([1e-40, 1e-30]), jnp.array([0.5, 0.5])),
        acc.ComposedEvent((acc.GaussianEvent(1e-40), acc.GaussianEvent(1e-30))),
        acc.SelfComposedEvent(acc.GaussianEvent(1e-40), 7),
    ],
    ids=["mu", "mu 1e-300", "r", "xi", "mixture", "composed", "self-composed"],
)
def test_tiny_budgets_are_private_not_nan(event):
    eps = np.asarray(acc.epsilon(event, np.array(TINY_DELTAS)))  # shapes shared: compiled once
    assert np.all(np.isfinite(eps)) and np.all((eps >= 0) & (eps < 1e-6)), (event, eps)
    value = np.asarray(acc.delta(event, np.array(NP_EPS)))
    assert np.all(np.isfinite(value)) and np.all((value >= 0) & (value < 1e-6)), (event, value)
