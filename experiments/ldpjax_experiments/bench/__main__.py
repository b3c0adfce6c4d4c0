"""``python -m ldpjax_experiments.bench`` (the same as ``ldpjax bench``)."""

import sys

from ldpjax_experiments.bench import main

sys.exit(main())
