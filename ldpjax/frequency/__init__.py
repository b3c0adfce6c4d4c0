"""Frequency and mean estimation from the reports of the LDP oracles of :mod:`ldpjax.mechanisms`.

The oracles themselves (the privacy noise) live in :mod:`ldpjax.mechanisms`: generalized
randomized response (``kary_randomized_response``), unary encoding
(:mod:`~ldpjax.mechanisms.unary_encoding`: SUE, OUE, any (p, q)), local hashing
(:mod:`~ldpjax.mechanisms.local_hashing`: BLH, OLH), Hadamard response
(:mod:`~ldpjax.mechanisms.hadamard_response`), subset selection
(:mod:`~ldpjax.mechanisms.subset_selection`), and for numbers in [-1, 1] Duchi et al.'s
(:mod:`~ldpjax.mechanisms.duchi`), the piecewise (:mod:`~ldpjax.mechanisms.piecewise`) and the
hybrid (:mod:`~ldpjax.mechanisms.hybrid`) mechanisms; their events are in
:mod:`ldpjax.accounting.frequency_events`. This package post-processes the reports:

* :mod:`ldpjax.frequency.estimators` — support counts and the unbiased debiasing
  (c - n q*) / (p* - q*) of every oracle, and the mean of the numeric releases;
* :mod:`ldpjax.frequency.variance` — closed-form variances (Wang et al. 2017 for the counts;
  Duchi et al., piecewise and hybrid for the means), differentiable in eps, d and n;
* :mod:`ldpjax.frequency.postprocess` — Norm-Sub (projection onto the simplex) and the
  iterative Bayesian update;
* :mod:`ldpjax.frequency.online` — the online frequency-estimation family: an
  :class:`~ldpjax.engine.Algorithm` whose users report items round by round through one oracle
  (GRR, SUE, OUE, BLH, OLH, Hadamard response, subset selection) while the server keeps running
  counts and the debiased estimates (``online_frequency``; one compile across eps and d).

Example (OUE at eps = 3 over 4 items, 4000 users, all holding item 1):
  >>> import jax, jax.numpy as jnp
  >>> from ldpjax.mechanisms.unary_encoding import optimized_unary_encoding
  >>> reports = optimized_unary_encoding(jax.random.key(0), jnp.ones(4000, int), 3.0, 4)
  >>> f = oue_estimate(reports, 3.0)
  >>> [round(x, 1) for x in norm_sub(f).tolist()]
  [0.0, 1.0, 0.0, 0.0]
"""

from ldpjax.frequency.estimators import bit_support
from ldpjax.frequency.estimators import debias_counts
from ldpjax.frequency.estimators import estimate_frequencies
from ldpjax.frequency.estimators import grr_estimate
from ldpjax.frequency.estimators import grr_probabilities
from ldpjax.frequency.estimators import grr_support
from ldpjax.frequency.estimators import hadamard_estimate
from ldpjax.frequency.estimators import hadamard_probabilities
from ldpjax.frequency.estimators import mean_estimate
from ldpjax.frequency.estimators import olh_estimate
from ldpjax.frequency.estimators import olh_probabilities
from ldpjax.frequency.estimators import oue_estimate
from ldpjax.frequency.estimators import subset_estimate
from ldpjax.frequency.estimators import subset_probabilities
from ldpjax.frequency.estimators import sue_estimate
from ldpjax.frequency.estimators import unary_estimate
from ldpjax.frequency.online import FrequencyOutputs
from ldpjax.frequency.online import FrequencyParams
from ldpjax.frequency.online import FrequencyState
from ldpjax.frequency.online import OnlineFrequencyConfig
from ldpjax.frequency.online import expected_squared_error
from ldpjax.frequency.online import frequency_event
from ldpjax.frequency.online import frequency_params
from ldpjax.frequency.online import olh_buckets_of
from ldpjax.frequency.online import online_frequency
from ldpjax.frequency.online import support_probabilities
from ldpjax.frequency.online import zipf_weights
from ldpjax.frequency.postprocess import grr_channel
from ldpjax.frequency.postprocess import hadamard_channel
from ldpjax.frequency.postprocess import ibu
from ldpjax.frequency.postprocess import ibu_supports
from ldpjax.frequency.postprocess import norm_sub
from ldpjax.frequency.variance import count_variance
from ldpjax.frequency.variance import duchi_variance
from ldpjax.frequency.variance import grr_variance
from ldpjax.frequency.variance import hadamard_variance
from ldpjax.frequency.variance import hybrid_variance
from ldpjax.frequency.variance import olh_variance
from ldpjax.frequency.variance import oue_variance
from ldpjax.frequency.variance import piecewise_discrete_variance
from ldpjax.frequency.variance import piecewise_variance
from ldpjax.frequency.variance import subset_variance
from ldpjax.frequency.variance import sue_variance
from ldpjax.frequency.variance import unary_variance

__all__ = [
    "FrequencyOutputs",
    "FrequencyParams",
    "FrequencyState",
    "OnlineFrequencyConfig",
    "expected_squared_error",
    "frequency_event",
    "frequency_params",
    "olh_buckets_of",
    "online_frequency",
    "support_probabilities",
    "zipf_weights",
    "bit_support",
    "count_variance",
    "debias_counts",
    "duchi_variance",
    "estimate_frequencies",
    "grr_channel",
    "grr_estimate",
    "grr_probabilities",
    "grr_support",
    "grr_variance",
    "hadamard_channel",
    "hadamard_estimate",
    "hadamard_probabilities",
    "hadamard_variance",
    "hybrid_variance",
    "ibu",
    "ibu_supports",
    "mean_estimate",
    "norm_sub",
    "olh_estimate",
    "olh_probabilities",
    "olh_variance",
    "oue_estimate",
    "oue_variance",
    "piecewise_discrete_variance",
    "piecewise_variance",
    "subset_estimate",
    "subset_probabilities",
    "subset_variance",
    "sue_estimate",
    "sue_variance",
    "unary_estimate",
    "unary_variance",
]
