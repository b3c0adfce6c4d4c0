"""Benchmark: private epsilon-greedy (paper 002), ldpjax vs plain NumPy -- a thin wrapper.

The benchmark now lives in ``ldpjax bench`` (module :mod:`ldpjax_experiments.bench`); this script runs
its ``bandits`` workload(s). Extra arguments are passed through, e.g.::

    python experiments/bench_bandits.py [--size small|paper] [--rng philox2x32] [--repeats 2] [--json PATH]

which is the same as ``ldpjax bench --only bandits ...``.
"""

import sys

from ldpjax_experiments.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "bandits", *sys.argv[1:]]))
