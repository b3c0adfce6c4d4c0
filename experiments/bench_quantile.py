"""Benchmark: quantile Local SGD (paper 001), ldpjax vs plain NumPy -- a thin wrapper.

The benchmark now lives in ``ldpjax bench`` (module :mod:`ldpjax_experiments.bench`); this script runs
its ``quantile`` workload(s). Extra arguments are passed through, e.g.::

    python experiments/bench_quantile.py [--size small|paper] [--rng philox2x32] [--repeats 2] [--json PATH]

which is the same as ``ldpjax bench --only quantile ...``.
"""

import sys

from ldpjax_experiments.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "quantile", *sys.argv[1:]]))
