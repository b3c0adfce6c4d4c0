"""Benchmark: RW-FTPL and RW-AdaBatch (paper 000), ldpjax vs plain NumPy -- a thin wrapper.

The benchmark now lives in ``ldpjax bench`` (module :mod:`ldpjax_experiments.bench`); this script runs
its ``rw-ftpl,rw-adabatch`` workload(s). Extra arguments are passed through, e.g.::

    python experiments/bench_experts.py [--size small|paper] [--rng philox2x32] [--repeats 2] [--json PATH]

which is the same as ``ldpjax bench --only rw-ftpl,rw-adabatch ...``.
"""

import sys

from ldpjax_experiments.bench import main

if __name__ == "__main__":
    sys.exit(main(["--only", "rw-ftpl,rw-adabatch", *sys.argv[1:]]))
