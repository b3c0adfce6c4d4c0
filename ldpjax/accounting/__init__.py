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
"""

from ldpjax.accounting.gdp import gaussian_mu
from ldpjax.accounting.gdp import gdp_compose
from ldpjax.accounting.gdp import gdp_delta
from ldpjax.accounting.gdp import gdp_epsilon
from ldpjax.accounting.gdp import gdp_log_delta
from ldpjax.accounting.gdp import gdp_mu
from ldpjax.accounting.gdp import gdp_tradeoff
from ldpjax.accounting.mixture import gdp_mixture_delta
from ldpjax.accounting.mixture import gdp_mixture_tradeoff
from ldpjax.accounting.pure import compose_parallel
from ldpjax.accounting.pure import compose_sequential
from ldpjax.accounting.pure import krr_budget
from ldpjax.accounting.pure import krr_explore_prob
from ldpjax.accounting.pure import pure_dp_tradeoff
from ldpjax.accounting.pure import rr_epsilon
from ldpjax.accounting.pure import rr_rate
from ldpjax.accounting.zcdp import zcdp_delta
from ldpjax.accounting.zcdp import zcdp_epsilon

__all__ = [
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
    "pure_dp_tradeoff",
    "rr_epsilon",
    "rr_rate",
    "zcdp_delta",
    "zcdp_epsilon",
]
