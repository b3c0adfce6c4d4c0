"""Privacy budgeting for online experiments (Ponte & Ferecatu, "A Privacy Budgeting Framework for
Online Experimentation", 2026).

Segment-specific epsilon-greedy whose exploration is K-ary randomized response with a visitor
budget xi_t; budget strategies (constant, dynamic eq. 16, capped dynamic eq. 17, arm-specific
Appendix J); benchmarks (non-private epsilon-greedy, Gittins index, perfect information,
random); differentiable regret bounds (eqs. 15, 18) with privacy elasticities and optimal
budgets; firm-level portfolio allocation (eqs. 19-21); ASOS / Open Bandit Dataset loaders.

Public names are re-exported here, one per line; each algorithm lives in its own module.
"""

# --- regret bounds, elasticities, optimal budgets (bounds.py)
from ldpjax.bandits.baselines import baseline_params
from ldpjax.bandits.baselines import nonprivate_greedy
from ldpjax.bandits.baselines import oracle_policy
from ldpjax.bandits.baselines import random_policy
from ldpjax.bandits.batched import BlockConfig
from ldpjax.bandits.batched import BlockParams
from ldpjax.bandits.batched import batched_epsilon_greedy
from ldpjax.bandits.batched import block_params
from ldpjax.bandits.batched import num_blocks
from ldpjax.bandits.bounds import budget_exhaustion_time
from ldpjax.bandits.bounds import elasticity_constant
from ldpjax.bandits.bounds import elasticity_dynamic
from ldpjax.bandits.bounds import gamma_star_constant
from ldpjax.bandits.bounds import gamma_star_dynamic
from ldpjax.bandits.bounds import regret_bound_constant
from ldpjax.bandits.bounds import regret_bound_dynamic
from ldpjax.bandits.budgets import STRATEGIES
from ldpjax.bandits.budgets import STRATEGY_NAMES
from ldpjax.bandits.budgets import arm_specific_exploration
from ldpjax.bandits.budgets import dynamic_explore_prob
from ldpjax.bandits.budgets import exploration

# --- data (data.py)
from ldpjax.bandits.data import synthetic_asos
from ldpjax.bandits.data import synthetic_obd

# --- environment, strategies, policies
from ldpjax.bandits.environment import Environment
from ldpjax.bandits.environment import make_environment
from ldpjax.bandits.epsilon_greedy import EpsilonGreedyParams
from ldpjax.bandits.epsilon_greedy import epsilon_greedy
from ldpjax.bandits.epsilon_greedy import epsilon_greedy_hints
from ldpjax.bandits.epsilon_greedy import epsilon_greedy_params
from ldpjax.bandits.gittins import GITTINS_HINTS
from ldpjax.bandits.gittins import GittinsConfig
from ldpjax.bandits.gittins import IndexTable
from ldpjax.bandits.gittins import default_extra_depth
from ldpjax.bandits.gittins import gittins_index
from ldpjax.bandits.gittins import gittins_index_table
from ldpjax.bandits.gittins import gittins_params
from ldpjax.bandits.gittins import gittins_policy
from ldpjax.bandits.gittins import gittins_table

# --- portfolio allocation (portfolio.py)
from ldpjax.bandits.portfolio import Allocation
from ldpjax.bandits.portfolio import allocate_budget
from ldpjax.bandits.portfolio import equal_split
from ldpjax.bandits.portfolio import strategy_names
from ldpjax.bandits.portfolio import unconstrained_allocation

# --- privacy of the shown arm (privacy.py)
from ldpjax.bandits.privacy import empirical_epsilon
from ldpjax.bandits.privacy import mechanism_epsilon
from ldpjax.bandits.privacy import posterior_odds_bound
from ldpjax.bandits.privacy import posterior_probability_bound
from ldpjax.bandits.state import BanditOutputs
from ldpjax.bandits.state import BanditState
from ldpjax.bandits.state import PolicyConfig
from ldpjax.bandits.state import max_spend

__all__ = [
    "GITTINS_HINTS",
    "IndexTable",
    "default_extra_depth",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "Allocation",
    "BanditOutputs",
    "BanditState",
    "BlockConfig",
    "BlockParams",
    "Environment",
    "EpsilonGreedyParams",
    "GittinsConfig",
    "PolicyConfig",
    "allocate_budget",
    "arm_specific_exploration",
    "baseline_params",
    "batched_epsilon_greedy",
    "block_params",
    "budget_exhaustion_time",
    "dynamic_explore_prob",
    "elasticity_constant",
    "elasticity_dynamic",
    "empirical_epsilon",
    "epsilon_greedy",
    "epsilon_greedy_hints",
    "epsilon_greedy_params",
    "equal_split",
    "exploration",
    "gamma_star_constant",
    "gamma_star_dynamic",
    "gittins_index",
    "gittins_index_table",
    "gittins_params",
    "gittins_policy",
    "gittins_table",
    "make_environment",
    "max_spend",
    "mechanism_epsilon",
    "nonprivate_greedy",
    "num_blocks",
    "oracle_policy",
    "posterior_odds_bound",
    "posterior_probability_bound",
    "random_policy",
    "regret_bound_constant",
    "regret_bound_dynamic",
    "strategy_names",
    "synthetic_asos",
    "synthetic_obd",
    "unconstrained_allocation",
]
