"""Benchmark: RW-Meta and Agarwal & Singh (paper 000), ldpjax vs plain NumPy -- a thin wrapper.

The benchmark now lives in ``ldpjax bench`` (module :mod:`ldpjax_experiments.bench`); this script runs
its ``rw-meta,agarwal-singh`` workload(s). Extra arguments are passed through, e.g.::

    python experiments/bench_experts_meta.py [--size small|paper] [--rng philox2x32] [--repeats 2] [--json PATH]

which is the same as ``ldpjax bench --only rw-meta,agarwal-singh ...``.
"""

import sys

from ldpjax_experiments.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "rw-meta,agarwal-singh", *sys.argv[1:]]))
