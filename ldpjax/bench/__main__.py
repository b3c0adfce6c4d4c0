"""``python -m ldpjax.bench`` (the same as ``ldpjax bench``)."""

import sys

from ldpjax.bench import main

sys.exit(main())
