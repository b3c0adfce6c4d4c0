"""The census2000 reader, re-exported from :mod:`ldpjax.datasets.census` (its home)."""

from __future__ import annotations

import importlib.util  # noqa: F401  (callers patch data.importlib.util.find_spec)

from ldpjax.datasets.census import (
    INSTALL_HINT,
    census_available,
    census_missing_message,
    census_path,
    load_census2000,
)

__all__ = [
    "INSTALL_HINT",
    "census_available",
    "census_missing_message",
    "census_path",
    "load_census2000",
]
