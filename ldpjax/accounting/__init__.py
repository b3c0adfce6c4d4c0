"""Differentiable privacy accounting shared by every ldpjax algorithm.

Every function is a pure JAX function: ``jit``-, ``vmap``- and ``grad``-able in float32 and
float64, validated (``ValueError`` naming the argument and its allowed range) when called with
concrete values, and NaN-returning for out-of-domain entries under ``jit``.

Gaussian DP (Dong, Roth & Su 2019): :func:`gdp_delta`, :func:`gdp_log_delta`,
:func:`gdp_epsilon`, :func:`gdp_mu`, :func:`gdp_tradeoff`, :func:`gdp_compose`,
:func:`gaussian_mu`. Revealed mixtures (amplification by batching): :func:`gdp_mixture_delta`,
:func:`gdp_mixture_tradeoff`. Pure DP: :func:`rr_epsilon`, :func:`rr_rate`,
:func:`krr_explore_prob`, :func:`krr_budget`, :func:`pure_dp_tradeoff`,
:func:`compose_parallel`, :func:`compose_sequential`. zCDP (Bun & Steinke 2016) converted to
(eps, delta) (Canonne, Kamath & Steinke 2020, Cor. 13): :func:`zcdp_delta`, :func:`zcdp_epsilon`.

Booleans are refused as budgets (``ValueError``, also when traced). A concrete delta is used
through its float64 logarithm, so any valid delta (1e-300 included) works in float32; a concrete
budget below the dtype's normal range (mu = 1e-40 in float32) counts as its smallest normal
number. Traced out-of-domain arguments give NaN — and a NaN gradient.

Privacy events (:mod:`ldpjax.accounting.events`: :class:`GaussianEvent`, :class:`PureDpEvent`,
:class:`ApproxDpEvent`, compositions, ...) and their accountants
(:mod:`ldpjax.accounting.accountant`: :func:`delta`, :func:`epsilon`, :func:`tradeoff`), which
read any event through the event protocol (:mod:`ldpjax.accounting.protocol`), so an event
defined elsewhere is accounted as soon as it offers one of its views. Amplification by revealed
batching: :mod:`ldpjax.accounting.amplification`. Privacy loss distributions composed by FFT
(:mod:`ldpjax.accounting.pld`, :mod:`ldpjax.accounting.pld_events`,
:mod:`ldpjax.accounting.pld_accountant`: :class:`PldGrid`, :func:`pld_event_epsilon`, ...) bound
any composition; amplification by subsampling: :mod:`ldpjax.accounting.subsampling`
(:class:`PoissonSampledEvent`, :class:`SampledWithoutReplacementEvent`).
"""

from ldpjax.accounting import amplification  # noqa: F401  (submodules, for attribute access)
from ldpjax.accounting import events  # noqa: F401
from ldpjax.accounting import pld  # noqa: F401
from ldpjax.accounting import pld_accountant  # noqa: F401
from ldpjax.accounting import pld_events  # noqa: F401
from ldpjax.accounting import pld_fft  # noqa: F401
from ldpjax.accounting import protocol  # noqa: F401
from ldpjax.accounting import subsampling  # noqa: F401
from ldpjax.accounting.accountant import check_event
from ldpjax.accounting.accountant import composed_mu
from ldpjax.accounting.accountant import composed_rho
from ldpjax.accounting.accountant import delta
from ldpjax.accounting.accountant import describe
from ldpjax.accounting.accountant import epsilon
from ldpjax.accounting.accountant import pure_epsilon
from ldpjax.accounting.accountant import route
from ldpjax.accounting.accountant import tradeoff
from ldpjax.accounting import frequency_events  # noqa: F401
from ldpjax.accounting.frequency_events import DuchiEvent
from ldpjax.accounting.frequency_events import HadamardResponseEvent
from ldpjax.accounting.frequency_events import HybridEvent
from ldpjax.accounting.frequency_events import LocalHashingEvent
from ldpjax.accounting.frequency_events import PiecewiseEvent
from ldpjax.accounting.frequency_events import SubsetSelectionEvent
from ldpjax.accounting.frequency_events import UnaryEncodingEvent
from ldpjax.accounting.frequency_events import oue_event
from ldpjax.accounting.frequency_events import sue_event
from ldpjax.accounting import shuffle  # noqa: F401
from ldpjax.accounting.shuffle import ShuffledEvent
from ldpjax.accounting.shuffle import shuffle_delta
from ldpjax.accounting.shuffle import shuffle_epsilon
from ldpjax.accounting.shuffle import shuffle_epsilon_closed_form
from ldpjax.accounting.calibration import calibrate
from ldpjax.accounting.events import WeightedRandomizedResponseEvent
from ldpjax.accounting.events import ApproxDpEvent
from ldpjax.accounting.composition import ComposedEvent
from ldpjax.accounting.events import DiscreteGaussianEvent
from ldpjax.accounting.events import GaussianEvent
from ldpjax.accounting.events import GaussianMixtureEvent
from ldpjax.accounting.events import KaryRandomizedResponseEvent
from ldpjax.accounting.events import LaplaceEvent
from ldpjax.accounting.events import NoPrivacyEvent
from ldpjax.accounting.composition import ParallelEvent
from ldpjax.accounting.events import PureDpEvent
from ldpjax.accounting.events import RandomizedResponseEvent
from ldpjax.accounting.composition import SelfComposedEvent
from ldpjax.accounting.gdp import gaussian_mu
from ldpjax.accounting.gdp import gdp_compose
from ldpjax.accounting.gdp import gdp_delta
from ldpjax.accounting.gdp import gdp_epsilon
from ldpjax.accounting.gdp import gdp_log_delta
from ldpjax.accounting.gdp import gdp_mu
from ldpjax.accounting.gdp import gdp_tradeoff
from ldpjax.accounting.mixture import gdp_mixture_delta
from ldpjax.accounting.mixture import gdp_mixture_tradeoff
from ldpjax.accounting.pld import PldGrid
from ldpjax.accounting.pld import PrivacyLossDistribution
from ldpjax.accounting.pld import pld_delta
from ldpjax.accounting.pld import pld_epsilon
from ldpjax.accounting.pld_accountant import pld_event_delta
from ldpjax.accounting.pld_accountant import pld_event_epsilon
from ldpjax.accounting.pld_accountant import pld_grid
from ldpjax.accounting.pld_events import event_pld
from ldpjax.accounting.pure import compose_parallel
from ldpjax.accounting.pure import compose_sequential
from ldpjax.accounting.pure import krr_budget
from ldpjax.accounting.pure import krr_explore_prob
from ldpjax.accounting.pure import pure_dp_tradeoff
from ldpjax.accounting.pure import rr_epsilon
from ldpjax.accounting.pure import rr_rate
from ldpjax.accounting.subsampling import PoissonSampledEvent
from ldpjax.accounting.subsampling import SampledWithoutReplacementEvent
from ldpjax.accounting.zcdp import zcdp_delta
from ldpjax.accounting.zcdp import zcdp_epsilon

__all__ = [
    "ShuffledEvent",
    "shuffle_delta",
    "shuffle_epsilon",
    "shuffle_epsilon_closed_form",
    "calibrate",
    "WeightedRandomizedResponseEvent",
    "DuchiEvent",
    "HadamardResponseEvent",
    "HybridEvent",
    "LocalHashingEvent",
    "PiecewiseEvent",
    "SubsetSelectionEvent",
    "UnaryEncodingEvent",
    "oue_event",
    "sue_event",
    "ApproxDpEvent",
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GaussianMixtureEvent",
    "KaryRandomizedResponseEvent",
    "LaplaceEvent",
    "NoPrivacyEvent",
    "ParallelEvent",
    "PldGrid",
    "PoissonSampledEvent",
    "PrivacyLossDistribution",
    "PureDpEvent",
    "RandomizedResponseEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "check_event",
    "composed_mu",
    "composed_rho",
    "delta",
    "describe",
    "epsilon",
    "pure_epsilon",
    "route",
    "tradeoff",
    "compose_parallel",
    "compose_sequential",
    "gaussian_mu",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_log_delta",
    "gdp_mixture_delta",
    "gdp_mixture_tradeoff",
    "gdp_mu",
    "gdp_tradeoff",
    "krr_budget",
    "krr_explore_prob",
    "event_pld",
    "pld_delta",
    "pld_epsilon",
    "pld_event_delta",
    "pld_event_epsilon",
    "pld_grid",
    "pure_dp_tradeoff",
    "rr_epsilon",
    "rr_rate",
    "zcdp_delta",
    "zcdp_epsilon",
]
