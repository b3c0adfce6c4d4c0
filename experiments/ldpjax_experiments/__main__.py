"""``python -m ldpjax_experiments``: the ``ldpjax`` command line (see :mod:`ldpjax_experiments.cli`)."""

import os
import sys

try:
    from ldpjax_experiments.cli import main
except KeyboardInterrupt:  # Ctrl-C while JAX is still being imported
    print("\nldpjax: interrupted \u2014 rerun the same command to resume", file=sys.stderr,
          flush=True)
    os._exit(130)

if __name__ == "__main__":
    raise SystemExit(main())
