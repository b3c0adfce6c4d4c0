"""The US HHS facility file: weeks x hospitals COVID patient density for one state.

The file is "COVID-19 Reported Patient Impact and Hospital Capacity by Facility"
(healthdata.gov ``anag-cw7u``; one row per ``hospital_pk`` per ``collection_week``), read with
the ``csv`` module and NumPy only (:func:`load_hhs_facility`):

* density = ``inpatient_beds_used_covid_7_day_avg`` / ``inpatient_beds_7_day_avg`` (the
  capacity column recommended by the data's SOURCE.md: ``total_beds_7_day_avg`` is mostly NA
  for PA in 2022), clipped to [0, 1];
* a cell is *suppressed* when it holds -999999 (HHS hides values 1..3), *missing* when empty or
  NA-like (``NA``, ``N/A``, ``NaN``, ``null``); both make the row unusable, as do a
  non-positive capacity or a negative value other than -999999; any other text that is not a
  number makes the file malformed (``ValueError`` with the line and column);
* the weeks are every ``collection_week`` with a row for the chosen state (optionally within
  ``[start, end]``); a hospital is kept only with a usable row in every one of those weeks (a
  complete series); duplicate (hospital, week) rows keep the first and are counted;
* the returned :class:`CovidData` carries a ``report`` of how many rows and hospitals were
  dropped and why (row reasons are not exclusive; each dropped hospital is counted once, under
  "missing weeks" when it lacks a row for some week, else under "unusable values").

:func:`shared_covid_dir` finds the project's shared data folder
(``<repository>/../shared/data/covid``) and :func:`find_hhs_files` the HHS facility files in
it; the full 148-week series is healthdata.gov ``anag-cw7u`` (download it as CSV and pass it to
:func:`load_hhs_facility`).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import math
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

COVID_COLUMN = "inpatient_beds_used_covid_7_day_avg"
CAPACITY_COLUMN = "inpatient_beds_7_day_avg"
SUPPRESSED = -999999.0
MISSING_TOKENS = frozenset({"", "NA", "N/A", "NAN", "NULL", "NONE"})

_WEEK_RE = re.compile(r"^\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:$|[ T])")


@dataclasses.dataclass(frozen=True)
class CovidData:
    """A weeks x hospitals density matrix and where it came from.

    Attributes:
      density: (weeks, hospitals) float array in [0, 1] (the gains).
      weeks: ISO dates of the collection weeks.
      hospitals: hospital ids (``hospital_pk``, or synthetic ids).
      hospital_names: names where known.
      state: two-letter state code.
      source: one line saying which data this is (label every output with it).
      report: rows / hospitals read, kept and dropped, with reasons.
    """

    density: np.ndarray
    weeks: tuple[str, ...]
    hospitals: tuple[str, ...]
    hospital_names: tuple[str, ...]
    state: str
    source: str
    report: dict[str, Any]

    @property
    def num_weeks(self) -> int:
        return int(self.density.shape[0])

    @property
    def num_hospitals(self) -> int:
        return int(self.density.shape[1])


# --------------------------------------------------------------------------- cells
def check_state(state: Any) -> str:
    """A two-letter state code, upper case (``ValueError`` otherwise)."""
    if not isinstance(state, str) or not re.fullmatch(r"[A-Za-z]{2}", state.strip()):
        raise ValueError(f"state must be a two-letter state code such as 'NM'; got {state!r}")
    return state.strip().upper()


def _parse_week(text: str, where: str) -> str:
    match = _WEEK_RE.match(text or "")
    if match is None:
        raise ValueError(
            f"{where}: collection_week must be a date like 2022-09-23 or 2022/09/23; got {text!r}"
        )
    year, month, day = (int(g) for g in match.groups())
    try:
        return _dt.date(year, month, day).isoformat()
    except ValueError as err:
        raise ValueError(f"{where}: invalid collection_week {text!r} ({err})") from None


def _parse_value(text: str, column: str, where: str) -> tuple[float, str]:
    """(value, status) with status in ok / missing / suppressed / negative."""
    token = (text or "").strip()
    if token.upper() in MISSING_TOKENS:
        return math.nan, "missing"
    try:
        value = float(token.replace(",", ""))
    except ValueError:
        raise ValueError(
            f"{where}: column {column!r} must be a number, empty/NA or -999999; got {text!r}"
        ) from None
    if math.isnan(value):
        return math.nan, "missing"
    if value == SUPPRESSED:
        return math.nan, "suppressed"
    if value < 0 or math.isinf(value):
        return math.nan, "negative"
    return value, "ok"


def _bounds(start: str | None, end: str | None) -> tuple[str | None, str | None]:
    bounds = tuple(None if x is None else _parse_week(str(x), name)
                   for name, x in (("start", start), ("end", end)))
    if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
        raise ValueError(f"start must be <= end; got start={start!r}, end={end!r}")
    return bounds


# --------------------------------------------------------------------------- rows
@dataclasses.dataclass
class _Scan:
    """What a pass over the file found (filled row by row)."""

    state: str
    bounds: tuple[str | None, str | None]
    columns: tuple[str, str]
    rows_read: int = 0
    rows_state: int = 0
    rows_outside: int = 0
    duplicates: int = 0
    states_seen: Counter = dataclasses.field(default_factory=Counter)
    reasons: Counter = dataclasses.field(default_factory=Counter)
    records: dict = dataclasses.field(default_factory=dict)  # (hospital, week) -> (covid, beds, usable)
    names: dict = dataclasses.field(default_factory=dict)


def _header(reader, path: Path, required: tuple[str, ...]) -> tuple[dict[str, int], int | None, int]:
    """(column index of each required column, of ``hospital_name`` or None, width)."""
    try:
        header = next(reader)
    except StopIteration:
        raise ValueError(f"{path}: the file is empty (no header row)") from None
    header = [h.strip() for h in header]
    missing = [c for c in required if c not in header]
    if missing:
        raise ValueError(
            f"{path}: missing required column(s) {missing}; an HHS facility file needs "
            f"{list(required)}"
        )
    name_index = header.index("hospital_name") if "hospital_name" in header else None
    return {c: header.index(c) for c in required}, name_index, len(header)


def _in_bounds(week: str, bounds: tuple[str | None, str | None]) -> bool:
    return not ((bounds[0] is not None and week < bounds[0])
                or (bounds[1] is not None and week > bounds[1]))


def _read_row(scan: _Scan, fields: list[str], index: dict[str, int], name_index: int | None,
              where: str) -> None:
    scan.rows_read += 1
    row_state = fields[index["state"]].strip().upper()
    scan.states_seen[row_state] += 1
    if row_state != scan.state:
        return
    week = _parse_week(fields[index["collection_week"]], where)
    if not _in_bounds(week, scan.bounds):
        scan.rows_outside += 1
        return
    scan.rows_state += 1
    hospital = fields[index["hospital_pk"]].strip()
    if not hospital:
        raise ValueError(f"{where}: empty hospital_pk")
    if name_index is not None:
        scan.names.setdefault(hospital, fields[name_index].strip())
    covid_column, capacity_column = scan.columns
    covid, covid_status = _parse_value(fields[index[covid_column]], covid_column, where)
    beds, beds_status = _parse_value(fields[index[capacity_column]], capacity_column, where)
    if (hospital, week) in scan.records:
        scan.duplicates += 1
        return
    usable = True
    if covid_status != "ok":
        scan.reasons[f"covid_{covid_status}"] += 1
        usable = False
    if beds_status != "ok":
        scan.reasons[f"capacity_{beds_status}"] += 1
        usable = False
    elif beds <= 0:
        scan.reasons["capacity_zero"] += 1
        usable = False
    scan.records[(hospital, week)] = (covid, beds, usable)


def _scan_file(path: Path, scan: _Scan) -> _Scan:
    required = ("hospital_pk", "collection_week", "state", *scan.columns)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            index, name_index, width = _header(reader, path, required)
            for fields in reader:
                where = f"{path}: line {reader.line_num}"
                if not fields:
                    continue
                if len(fields) != width:
                    raise ValueError(
                        f"{where}: expected {width} comma-separated fields (as in the header), "
                        f"got {len(fields)}"
                    )
                _read_row(scan, fields, index, name_index, where)
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not a UTF-8 text (CSV) file ({err})") from None
    except csv.Error as err:
        raise ValueError(f"{path}: malformed CSV ({err})") from None
    return scan


def _check_scan(scan: _Scan, path: Path, start: str | None, end: str | None) -> None:
    if scan.rows_read == 0:
        raise ValueError(f"{path}: the file has a header but no data rows")
    if scan.states_seen[scan.state] == 0:
        raise ValueError(
            f"state {scan.state!r} does not occur in {path.name}; states in the file: "
            f"{sorted(scan.states_seen)}"
        )
    if scan.rows_state == 0:
        raise ValueError(
            f"no {scan.state} rows between start={start!r} and end={end!r} in {path.name}")


# --------------------------------------------------------------------------- series
def _complete_series(records: dict, weeks: list[str]) -> tuple[list, list, list, list]:
    """(all hospitals, kept, dropped for a missing week, dropped for unusable values)."""
    hospitals_all = sorted({h for h, _ in records})
    kept, missing_weeks, unusable = [], [], []
    for hospital in hospitals_all:
        if not all((hospital, w) in records for w in weeks):
            missing_weeks.append(hospital)
        elif all(records[(hospital, w)][2] for w in weeks):
            kept.append(hospital)
        else:
            unusable.append(hospital)
    return hospitals_all, kept, missing_weeks, unusable


def _density(records: dict, weeks: list[str], kept: list[str]) -> np.ndarray:
    density = np.empty((len(weeks), len(kept)), dtype=np.float64)
    for j, hospital in enumerate(kept):
        for i, week in enumerate(weeks):
            covid, beds, _ = records[(hospital, week)]
            density[i, j] = covid / beds
    return density


def _report(scan: _Scan, weeks: list[str], series: tuple, clipped: int) -> dict[str, Any]:
    hospitals_all, kept, missing_weeks, unusable = series
    dates = [_dt.date.fromisoformat(w) for w in weeks]
    gaps = sum(1 for a, b in zip(dates, dates[1:], strict=False) if (b - a).days != 7)
    usable_rows = sum(1 for r in scan.records.values() if r[2])
    return {
        "rows_read": scan.rows_read,
        "rows_state": scan.rows_state,
        "rows_outside_dates": scan.rows_outside,
        "rows_duplicate": scan.duplicates,
        "rows_usable": usable_rows,
        "rows_unusable": len(scan.records) - usable_rows,
        "row_reasons": dict(sorted(scan.reasons.items())),
        "weeks": len(weeks),
        "week_gaps": gaps,
        "hospitals_state": len(hospitals_all),
        "hospitals_kept": len(kept),
        "hospitals_dropped_missing_weeks": len(missing_weeks),
        "hospitals_dropped_unusable_values": len(unusable),
        "cells_clipped_to_1": clipped,
    }


def load_hhs_facility(
    path: str | os.PathLike,
    state: str,
    *,
    start: str | None = None,
    end: str | None = None,
    covid_column: str = COVID_COLUMN,
    capacity_column: str = CAPACITY_COLUMN,
) -> CovidData:
    """Weeks x hospitals COVID density for one state from an HHS facility CSV file.

    Args:
      path: the CSV file (the HHS facility format, any subset of its columns that includes
        ``hospital_pk``, ``collection_week``, ``state`` and the two value columns).
      state: two-letter code, e.g. ``"NM"``; it must occur in the file.
      start, end: optional ISO dates bounding the collection weeks kept (inclusive).
      covid_column, capacity_column: numerator and denominator of the density.

    Returns:
      :class:`CovidData` (hospitals sorted by ``hospital_pk``, weeks ascending).

    Raises:
      ValueError: unreadable / empty / malformed file (wrong number of fields, non-numeric
        value, bad date), a missing column, an unknown state, bad ``start``/``end``, or no
        hospital with a complete series.

    Example:
      >>> import tempfile, pathlib
      >>> file = pathlib.Path(tempfile.mkdtemp()) / "hhs.csv"
      >>> _ = file.write_text(
      ...     "hospital_pk,collection_week,state,inpatient_beds_used_covid_7_day_avg,"
      ...     "inpatient_beds_7_day_avg\\nh1,2022-09-23,NM,5,100\\nh1,2022-09-30,NM,10,100\\n")
      >>> data = load_hhs_facility(file, "NM")
      >>> data.density.tolist(), data.weeks
      ([[0.05], [0.1]], ('2022-09-23', '2022-09-30'))
    """
    path = Path(path)
    state = check_state(state)
    bounds = _bounds(start, end)
    if not path.is_file():
        raise ValueError(f"HHS facility file {str(path)!r} does not exist or is not a file")
    scan = _scan_file(path, _Scan(state, bounds, (covid_column, capacity_column)))
    _check_scan(scan, path, start, end)
    weeks = sorted({w for _, w in scan.records})
    series = _complete_series(scan.records, weeks)
    kept = series[1]
    if not kept:
        raise ValueError(
            f"no {state} hospital in {path.name} has a usable value in all {len(weeks)} weeks "
            f"({len(series[2])} lack a week, {len(series[3])} have unusable values)"
        )
    density = _density(scan.records, weeks, kept)
    clipped = int(np.sum(density > 1.0))
    source = (
        f"real HHS facility data: {path.name}, {state}, {len(weeks)} weeks "
        f"{weeks[0]}..{weeks[-1]}, {len(kept)} hospitals with a complete series"
    )
    return CovidData(np.clip(density, 0.0, 1.0), tuple(weeks), tuple(kept),
                     tuple(scan.names.get(h, "") for h in kept), state, source,
                     _report(scan, weeks, series, clipped))


def format_report(data: CovidData) -> str:
    """A one-paragraph account of what the loader kept and dropped."""
    r = data.report
    if r.get("synthetic"):
        return f"{data.source} (no rows dropped: synthetic)"
    reasons = ", ".join(f"{k.replace('_', ' ')}: {n}" for k, n in r["row_reasons"].items())
    return (
        f"{data.state}: {r['rows_state']} rows in {r['weeks']} weeks, {r['rows_unusable']} "
        f"unusable ({reasons or 'none'}), {r['rows_duplicate']} duplicate; hospitals "
        f"{r['hospitals_state']} -> kept {r['hospitals_kept']} (dropped "
        f"{r['hospitals_dropped_missing_weeks']} lacking a week, "
        f"{r['hospitals_dropped_unusable_values']} with unusable values); "
        f"{r['cells_clipped_to_1']} densities clipped to 1."
    )


# --------------------------------------------------------------------------- where the files are
def shared_covid_dir(option: str | os.PathLike = "") -> Path | None:
    """The folder holding real HHS facility extracts, or None if there is none.

    ``option`` if given (a folder), else ``$LDPJAX_SHARED_DATA/covid`` when that variable is
    set (and then only it), else the first existing of ``./../shared/data/covid`` (relative to
    the working directory) and ``<repository>/../shared/data/covid`` (the layout of this
    project's checkout).
    """
    if option:
        path = Path(option)
        if path.is_dir() and (path / "covid").is_dir():
            path = path / "covid"
        return path if path.is_dir() else None
    if os.environ.get("LDPJAX_SHARED_DATA"):
        path = Path(os.environ["LDPJAX_SHARED_DATA"]) / "covid"
        return path if path.is_dir() else None
    candidates = [
        Path.cwd().parent / "shared" / "data" / "covid",
        Path(__file__).resolve().parents[2].parent / "shared" / "data" / "covid",
    ]
    for path in candidates:
        if path.is_dir():
            return path
    return None


def find_hhs_files(folder: str | os.PathLike | None) -> list[Path]:
    """CSV files in ``folder`` whose header has the columns :func:`load_hhs_facility` needs."""
    if folder is None or not Path(folder).is_dir():
        return []
    required = {"hospital_pk", "collection_week", "state", COVID_COLUMN, CAPACITY_COLUMN}
    found = []
    for path in sorted(Path(folder).glob("*.csv")):
        try:
            with open(path, newline="", encoding="utf-8-sig") as handle:
                header = {h.strip() for h in next(csv.reader(handle), [])}
        except (OSError, UnicodeDecodeError, csv.Error):
            continue
        if required <= header:
            found.append(path)
    return found


__all__ = [
    "CAPACITY_COLUMN",
    "COVID_COLUMN",
    "CovidData",
    "MISSING_TOKENS",
    "SUPPRESSED",
    "check_state",
    "find_hhs_files",
    "format_report",
    "load_hhs_facility",
    "shared_covid_dir",
]
