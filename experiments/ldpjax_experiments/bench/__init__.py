"""``ldpjax bench``: every family through ldpjax and through plain NumPy, in one process.

For each workload (:mod:`ldpjax_experiments.bench.workloads`: quantile Local SGD, bandits epsilon-greedy,
RW-FTPL, RW-AdaBatch, RW-Meta, Agarwal & Singh; on request ``noisy-counter`` and
``quantile-authors-loop``, the quantile cell against a per-sample Python loop written the way
a paper's research code is, :mod:`ldpjax_experiments.bench.authors_loop`) the bench

1. runs the ldpjax side once (compile + run), then ``repeats`` more times: the steady time is
   the median of those (the best is recorded too), the compile time the first call minus the
   steady time;
2. runs the NumPy reference (:mod:`ldpjax_experiments.bench.numpy_reference`) ``repeats`` times (median
   time; the best recorded too), seeds 0, 1, ...; a baseline that times only a share of the
   replications (the authors' loop) has its seconds scaled up by the inverse share
   (``numpy_scale``);
3. compares one statistic (a mean over seeds, see the workloads module for why the per-seed
   values are independent on both sides) with its standard error: ``agree`` is
   |diff| <= 3 sqrt(se_numpy^2 + se_ldpjax^2) (a false alarm has probability 0.27% per
   workload when both sides are right); workloads whose values are bounds rather than draws
   (``accounting-pld``, ``accounting-shuffle``: :mod:`ldpjax_experiments.bench.accounting`)
   replace this check with their own (``Prepared.compare``);
4. reports the peak memory of each side (host RSS above its level at the start of the side,
   sampled every 2 ms; plus the device's ``peak_bytes_in_use`` where the backend reports it)
   and the RNG floor: the random words the workload needs divided by the fastest generator's
   rate measured in the same run (:mod:`ldpjax_experiments.bench.rng`).

Timings block until the results are ready (``jax.block_until_ready``); nothing depends on the
backend, so the same command runs on CPU, GPU and TPU. ``x64=True`` (``--x64``) runs it all
with ``jax_enable_x64`` (float64 on both sides; the records say ``x64``). ``--plan``
(:mod:`ldpjax_experiments.bench.plan`) runs nothing: it compiles every workload's kernels with the
engine's device layout and prints the planned bytes per chunk against a modelled device.

Entry points: :func:`add_arguments` / :func:`run` (the CLI), :func:`run_bench` (Python; returns
the records), ``python -m ldpjax_experiments.bench``.

The package: :mod:`~ldpjax_experiments.bench.workloads` (what is run), :mod:`~ldpjax_experiments.bench.runner` (timing
and records), :mod:`~ldpjax_experiments.bench.report` (text output), :mod:`~ldpjax_experiments.bench.cli` (options),
:mod:`~ldpjax_experiments.bench.plan` (``--plan``), :mod:`~ldpjax_experiments.bench.memory`, :mod:`~ldpjax_experiments.bench.rng`,
:mod:`~ldpjax_experiments.bench.numpy_reference` and :mod:`~ldpjax_experiments.bench.authors_loop`.
"""

from ldpjax_experiments.bench.cli import add_arguments
from ldpjax_experiments.bench.cli import main
from ldpjax_experiments.bench.cli import run
from ldpjax_experiments.bench.memory import PeakMemory
from ldpjax_experiments.bench.plan import KernelPlan
from ldpjax_experiments.bench.plan import plan_workload
from ldpjax_experiments.bench.report import format_rates
from ldpjax_experiments.bench.report import format_table
from ldpjax_experiments.bench.runner import AGREE_SIGMAS
from ldpjax_experiments.bench.runner import RECORD_KEYS
from ldpjax_experiments.bench.runner import resolve_names
from ldpjax_experiments.bench.runner import run_bench
from ldpjax_experiments.bench.runner import run_workload

__all__ = [
    "AGREE_SIGMAS",
    "KernelPlan",
    "RECORD_KEYS",
    "PeakMemory",
    "add_arguments",
    "format_rates",
    "format_table",
    "main",
    "plan_workload",
    "resolve_names",
    "run",
    "run_bench",
    "run_workload",
]
