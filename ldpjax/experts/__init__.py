"""Prediction with expert advice under local differential privacy (ICLR 2026).

The algorithms of "Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026).

Public names are re-exported here, one per line (optax style); each algorithm lives in its
own module.
"""


# --- shared (foundation)
from ldpjax.experts.gains import validate_gains
from ldpjax.experts.privacy import noise_scale
from ldpjax.experts.privacy import privatize_gains

# --- RW-FTPL, RW-AdaBatch, amplification by batching
from ldpjax.experts.amplification import amplified_delta
from ldpjax.experts.amplification import amplified_event
from ldpjax.experts.amplification import amplified_tradeoff
from ldpjax.experts.amplification import batch_survival
from ldpjax.experts.amplification import covering_batch_survival
from ldpjax.experts.amplification import gap_cdf
from ldpjax.experts.amplification import gap_pdf
from ldpjax.experts.amplification import worst_case_batch_distribution
from ldpjax.experts.amplification import worst_case_batch_sizes
from ldpjax.experts.bounds import compute_delay
from ldpjax.experts.bounds import leader_change_bound
from ldpjax.experts.bounds import regret_bound_adabatch
from ldpjax.experts.bounds import regret_bound_ftpl
from ldpjax.experts.environments import bernoulli_gains
from ldpjax.experts.environments import equal_gains
from ldpjax.experts.environments import switching_best
from ldpjax.experts.environments import switching_gains
from ldpjax.experts.environments import uniform_gains
from ldpjax.experts.evaluation import EXPERTS_HINTS
from ldpjax.experts.evaluation import best_in_hindsight
from ldpjax.experts.evaluation import simulate_on_gains
from ldpjax.experts.evaluation import static_regret
from ldpjax.experts.rw_adabatch import AdaBatchConfig
from ldpjax.experts.rw_adabatch import AdaBatchParams
from ldpjax.experts.rw_adabatch import adabatch_params
from ldpjax.experts.rw_adabatch import rw_adabatch
from ldpjax.experts.rw_ftpl import FTPLConfig
from ldpjax.experts.rw_ftpl import FTPLParams
from ldpjax.experts.rw_ftpl import ftpl_params
from ldpjax.experts.rw_ftpl import rw_ftpl

# --- RW-Meta, learners, the central-DP baseline, the COVID task
from ldpjax.experts.agarwal_singh import TreeHedgeConfig
from ldpjax.experts.agarwal_singh import TreeHedgeParams
from ldpjax.experts.agarwal_singh import central_mu
from ldpjax.experts.agarwal_singh import hedge_tree_regret_bound
from ldpjax.experts.agarwal_singh import min_noise_setting
from ldpjax.experts.agarwal_singh import min_regret_setting
from ldpjax.experts.agarwal_singh import optimal_learning_rate
from ldpjax.experts.agarwal_singh import tree_hedge_params
from ldpjax.experts.agarwal_singh import tree_hedge
from ldpjax.experts.covid import synthetic_covid
from ldpjax.experts.covid import synthetic_covid_data
from ldpjax.experts.learners import Learner
from ldpjax.experts.learners import LearnerFamily
from ldpjax.experts.learners import LearnerSet
from ldpjax.experts.learners import evaluate_learners
from ldpjax.experts.learners import follow_the_noisy_leader
from ldpjax.experts.learners import leader_family
from ldpjax.experts.learners import learner_set
from ldpjax.experts.learners import paper_learners
from ldpjax.experts.learners import ridge_family
from ldpjax.experts.learners import ridge_learner
from ldpjax.experts.learners import static_expert
from ldpjax.experts.learners import static_family
from ldpjax.experts.meta_bounds import regret_bound_meta
from ldpjax.experts.rw_meta import MetaConfig
from ldpjax.experts.rw_meta import MetaParams
from ldpjax.experts.rw_meta import lambda_max_ratio
from ldpjax.experts.rw_meta import meta_params
from ldpjax.experts.rw_meta import rw_meta_algorithm

__all__ = [
    "AdaBatchConfig",
    "AdaBatchParams",
    "EXPERTS_HINTS",
    "FTPLConfig",
    "FTPLParams",
    "Learner",
    "LearnerFamily",
    "LearnerSet",
    "MetaConfig",
    "MetaParams",
    "TreeHedgeConfig",
    "TreeHedgeParams",
    "adabatch_params",
    "amplified_delta",
    "amplified_event",
    "amplified_tradeoff",
    "batch_survival",
    "bernoulli_gains",
    "best_in_hindsight",
    "central_mu",
    "compute_delay",
    "covering_batch_survival",
    "equal_gains",
    "evaluate_learners",
    "follow_the_noisy_leader",
    "ftpl_params",
    "gap_cdf",
    "gap_pdf",
    "hedge_tree_regret_bound",
    "lambda_max_ratio",
    "leader_change_bound",
    "leader_family",
    "learner_set",
    "meta_params",
    "min_noise_setting",
    "min_regret_setting",
    "noise_scale",
    "optimal_learning_rate",
    "paper_learners",
    "privatize_gains",
    "regret_bound_adabatch",
    "regret_bound_ftpl",
    "regret_bound_meta",
    "ridge_family",
    "ridge_learner",
    "rw_adabatch",
    "rw_ftpl",
    "rw_meta_algorithm",
    "simulate_on_gains",
    "static_expert",
    "static_family",
    "static_regret",
    "switching_best",
    "switching_gains",
    "synthetic_covid",
    "synthetic_covid_data",
    "tree_hedge",
    "tree_hedge_params",
    "uniform_gains",
    "validate_gains",
    "worst_case_batch_distribution",
    "worst_case_batch_sizes",
]
