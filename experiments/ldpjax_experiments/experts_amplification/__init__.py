"""``experts-amplification``: RW-FTPL vs RW-AdaBatch (*Prediction with Expert Advice under LDP*,
Sec. 4) -- regret, batch sizes and the privacy amplification of adaptive batching.

Three parts:

1. Regret vs T on a static environment (iid Bernoulli gains, one best expert by ``gap``) for
   every mu, RW-FTPL and RW-AdaBatch with common random numbers (the same key, hence the same
   noise), against the bounds (eta + 2/eta) sqrt(2 T log n) and (1 + alpha/2) times it. The
   table checks that AdaBatch stays within its bound and within a factor 1 + alpha/2 of
   RW-FTPL's regret up to sampling error (3 standard errors of the paired difference).
2. Batch sizes over rounds (RW-AdaBatch's ``batch_size`` output) on the worst case (all gains
   tied, :func:`~ldpjax.experts.equal_gains`) and on easy environments with a clear best
   expert: batches grow with the gap ("amplification is stronger when data is easy"). The
   analytic worst-case law of :mod:`ldpjax.experts.amplification` is drawn for comparison and
   tabulated as rows of its own (``source`` = analytic). The regret table's
   ``mean_batch_length`` is t / (batches started by t) at every checkpoint.
3. Privacy of round t: the analytic worst-case amplification vs the Monte Carlo estimate from
   simulated runs (empirical law of the batch containing round t, same mixture formulas), as
   tradeoff curves and as delta(eps), for every (n, t); the un-amplified mu-GDP curve is the
   reference. Under each curve panel the Monte Carlo estimate relative to the analytic curve
   (ratio for delta, difference for the tradeoff) shows the +-2 SE band that is a hair's width
   on the curves' own scale. The table reports delta at a few eps (with the Monte Carlo standard error) and
   eps at delta = 1e-5, and the largest amount (in standard errors) by which the analytic
   delta falls below the Monte Carlo one (it should never be more than sampling noise).

Study, then report: :func:`study` runs the three parts and returns an
:class:`AmplificationStudy` of labelled arrays (per-run regrets and batch counts, batch sizes,
the delta(eps) and tradeoff curves); :func:`report` derives every table, verdict, figure and the
summary from it alone (no keys, no simulation).
"""

from __future__ import annotations

from ldpjax_experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, ints
from ldpjax_experiments.experts_amplification.report import report
from ldpjax_experiments.experts_amplification.study import PAPER_TITLE, study

def run(ctx: RunContext) -> ExperimentResult:
    return report(study(ctx))


EXPERIMENT = Experiment(
    name="experts-amplification",
    description="RW-FTPL vs RW-AdaBatch: regret vs bounds, batch sizes, amplified privacy "
    f"({PAPER_TITLE})",
    run=run,
    options=(
        Option("mu", floats, (0.5, 1.0, 2.0), "per-round GDP budgets mu"),
        Option("experts", int, 10, "number of experts n for the regret and batch-size parts"),
        Option("horizon", int, 5000, "T of the regret part"),
        Option("gap", float, 0.1, "mean advantage of the best expert in the static environment"),
        Option("alpha", float, 0.01, "RW-AdaBatch's alpha"),
        Option("batch_horizon", int, 10000, "rounds of the batch-size part"),
        Option("easy_gaps", floats, (0.05, 0.2), "gaps of the easy environments (batch sizes)"),
        Option("batch_runs", int, 40, "runs per environment in the batch-size part"),
        Option("privacy_experts", ints, (10, 100), "n values of the privacy part"),
        Option("privacy_rounds", ints, (1000, 10000), "rounds t of the privacy part"),
        Option("privacy_mu", float, 1.0, "mu of the privacy plots and the batch-size part"),
        Option("mc_runs", int, 300, "Monte Carlo runs for the privacy part"),
    ),
    sizes={
        "small": {"seeds": 100},
        "paper": {
            "seeds": 1000,
            "horizon": 100000,
            "batch_horizon": 100000,
            "batch_runs": 200,
            "privacy_rounds": (1000, 10000, 100000),
            "mc_runs": 10000,
        },
    },
    order=20,
    cost=45,
)

__all__ = ["EXPERIMENT", "run"]
