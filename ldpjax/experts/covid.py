"""The COVID-19 hospital task of paper 000: the HHS facility loader and a synthetic stand-in.

Task (paper 000, Sec. 6; spec ``experts.md``): each week predict which hospital of a state
reports the highest COVID patient density (COVID inpatients / inpatient beds, in [0, 1]); the
gain of a hospital is its true density that week, so a gain matrix is weeks x hospitals.

**Loader** (:func:`load_hhs_facility`) for the US HHS file "COVID-19 Reported Patient Impact and
Hospital Capacity by Facility" (healthdata.gov ``anag-cw7u``; one row per ``hospital_pk`` per
``collection_week``), read with the ``csv`` module and NumPy only:

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

**Synthetic stand-in** (:func:`synthetic_covid`, :func:`synthetic_covid_data`): the 148-week
series the paper used is not available offline, so the experiment falls back on a documented
generator, a pure JAX function of a key. Weeks k = 0..147 start on 2020-07-31. For hospital i:

    density[k, i] = clip(scale_s * a_i * f_i(k) * exp(e_{k,i}), 0, 1)
    f_i(k) = 0.07 + sum_j h_j b_ij exp(-(k - c_j - d_i)^2 / (2 w_j^2))

* six waves j with centres / widths / relative heights from the US national COVID inpatient
  history (summer 2020 -- the series starts on its decline --, winter 2020-21, Delta in summer
  2021, Omicron in January 2022, BA.5 in summer 2022, winter 2022-23; :data:`WAVES`); each
  state shifts every centre by N(0, 2^2) weeks and scales every height by LogNormal(0, 0.25);
* hospital heterogeneity: level a_i ~ LogNormal(-0.18, 0.6) (mean 1), times 0.1 for a fraction
  0.21 of "low-COVID" facilities; a hospital lag d_i ~ N(0, 1.5^2) weeks; per-wave amplitudes
  b_ij ~ LogNormal(0, 0.35); weekly log-noise e ~ N(0, 0.19^2);
* scale_s makes the state's mean noise-free density over the weeks 2022-09-23..2022-10-21
  equal the mean density of the real 5-week extract for that state (NM 0.041, PA 0.055,
  CA 0.049);
* hospital counts NM 24, PA 146, CA 293 (the paper's complete-series counts).

Calibration from the real extract ``hhs_facility_NM_PA_CA_2022-09-23_to_2022-10-21.csv``
(hospitals with a complete 5-week series; recomputed in the tests): state mean densities as
above; the sd of log hospital level relative to the state is 0.51-0.71 (0.6 used); 55 of 258
hospitals (0.21) reported zero COVID inpatients in all five weeks; the sd of week-to-week log
changes is 0.25-0.28, i.e. iid weekly log-noise of sd ~0.19. The wave shape, lags and per-wave
amplitudes are not identifiable from five weeks: they are plausible, documented choices, fixed
before any algorithm was run and never tuned to favour one. In particular the per-wave amplitude
sd (``wave_heterogeneity``, 0.35), which sets how much the waves reorder hospitals and hence
how much a data-dependent learner can gain over the best static hospital, is not calibrated:
the five real weeks lie between two waves. ``experts-covid`` therefore sweeps it (its dynamics
sweep) and reports the result against the clean tracking advantage it produces.

All random draws come from one standard-normal pool (see :func:`synthetic_covid`), so one
compiled random kernel serves every state.

Real extracts: :func:`shared_covid_dir` finds the project's shared data folder
(``<repository>/../shared/data/covid``) and :func:`find_hhs_files` the HHS facility files in
it; the full 148-week series is healthdata.gov ``anag-cw7u`` (download it as CSV and pass it to
:func:`load_hhs_facility`).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import functools
import math
import os
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.types import Array, PRNGKey

COVID_COLUMN = "inpatient_beds_used_covid_7_day_avg"
CAPACITY_COLUMN = "inpatient_beds_7_day_avg"
SUPPRESSED = -999999.0
MISSING_TOKENS = frozenset({"", "NA", "N/A", "NAN", "NULL", "NONE"})

#: The paper's complete-series hospital counts per state.
STATE_HOSPITALS = {"NM": 24, "PA": 146, "CA": 293}
SYNTHETIC_WEEKS = 148
FIRST_WEEK = _dt.date(2020, 7, 31)
#: Mean density of hospitals with a complete series in the real extract (2022-09-23..10-21).
EXTRACT_STATE_MEAN = {"NM": 0.041, "PA": 0.055, "CA": 0.049}
EXTRACT_WEEKS = (112, 117)  # week indices [112, 117) = 2022-09-23 .. 2022-10-21
#: (centre week, width in weeks, relative height); week 0 = 2020-07-31.
WAVES = (
    (-1.0, 4.0, 0.33),  # summer 2020 (peak late July 2020)
    (23.0, 6.0, 0.80),  # winter 2020-21 (peak early January 2021)
    (57.0, 5.0, 0.58),  # Delta (peak early September 2021)
    (76.0, 3.5, 0.95),  # Omicron BA.1 (peak mid January 2022)
    (103.0, 8.0, 0.20),  # BA.5 (broad plateau, peak late July 2022)
    (125.0, 5.0, 0.22),  # winter 2022-23 (peak late December 2022)
)
BASELINE = 0.07
STATE_SHIFT_SD = 2.0
STATE_HEIGHT_LOG_SD = 0.25
HOSPITAL_LEVEL_LOG_SD = 0.6
LOW_COVID_FRACTION = 0.21
LOW_COVID_FACTOR = 0.1
HOSPITAL_LAG_SD = 1.5
WAVE_AMPLITUDE_LOG_SD = 0.35
WEEKLY_LOG_NOISE_SD = 0.19

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


# --------------------------------------------------------------------------- loader
def _check_state(state: Any) -> str:
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
    """
    path = Path(path)
    state = _check_state(state)
    bounds = []
    for name, value in (("start", start), ("end", end)):
        bounds.append(None if value is None else _parse_week(str(value), name))
    if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
        raise ValueError(f"start must be <= end; got start={start!r}, end={end!r}")
    if not path.is_file():
        raise ValueError(f"HHS facility file {str(path)!r} does not exist or is not a file")
    required = ("hospital_pk", "collection_week", "state", covid_column, capacity_column)

    rows_read = 0
    states_seen: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    records: dict[tuple[str, str], tuple[float, float, bool]] = {}
    names: dict[str, str] = {}
    duplicates = 0
    rows_state = rows_outside = 0
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
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
            index = {c: header.index(c) for c in required}
            name_index = header.index("hospital_name") if "hospital_name" in header else None
            width = len(header)
            for fields in reader:
                where = f"{path}: line {reader.line_num}"
                if not fields:
                    continue
                if len(fields) != width:
                    raise ValueError(
                        f"{where}: expected {width} comma-separated fields (as in the header), "
                        f"got {len(fields)}"
                    )
                rows_read += 1
                row_state = fields[index["state"]].strip().upper()
                states_seen[row_state] += 1
                if row_state != state:
                    continue
                week = _parse_week(fields[index["collection_week"]], where)
                if (bounds[0] is not None and week < bounds[0]) or (
                    bounds[1] is not None and week > bounds[1]
                ):
                    rows_outside += 1
                    continue
                rows_state += 1
                hospital = fields[index["hospital_pk"]].strip()
                if not hospital:
                    raise ValueError(f"{where}: empty hospital_pk")
                if name_index is not None:
                    names.setdefault(hospital, fields[name_index].strip())
                covid, covid_status = _parse_value(fields[index[covid_column]], covid_column, where)
                beds, beds_status = _parse_value(
                    fields[index[capacity_column]], capacity_column, where
                )
                if (hospital, week) in records:
                    duplicates += 1
                    continue
                usable = True
                if covid_status != "ok":
                    reasons[f"covid_{covid_status}"] += 1
                    usable = False
                if beds_status != "ok":
                    reasons[f"capacity_{beds_status}"] += 1
                    usable = False
                elif beds <= 0:
                    reasons["capacity_zero"] += 1
                    usable = False
                records[(hospital, week)] = (covid, beds, usable)
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not a UTF-8 text (CSV) file ({err})") from None
    except csv.Error as err:
        raise ValueError(f"{path}: malformed CSV ({err})") from None

    if rows_read == 0:
        raise ValueError(f"{path}: the file has a header but no data rows")
    if states_seen[state] == 0:
        raise ValueError(
            f"state {state!r} does not occur in {path.name}; states in the file: "
            f"{sorted(states_seen)}"
        )
    if rows_state == 0:
        raise ValueError(f"no {state} rows between start={start!r} and end={end!r} in {path.name}")

    weeks = sorted({w for _, w in records})
    hospitals_all = sorted({h for h, _ in records})
    kept, missing_weeks, unusable = [], [], []
    for hospital in hospitals_all:
        present = [(hospital, w) in records for w in weeks]
        if not all(present):
            missing_weeks.append(hospital)
        elif all(records[(hospital, w)][2] for w in weeks):
            kept.append(hospital)
        else:
            unusable.append(hospital)
    if not kept:
        raise ValueError(
            f"no {state} hospital in {path.name} has a usable value in all {len(weeks)} weeks "
            f"({len(missing_weeks)} lack a week, {len(unusable)} have unusable values)"
        )
    density = np.empty((len(weeks), len(kept)), dtype=np.float64)
    for j, hospital in enumerate(kept):
        for i, week in enumerate(weeks):
            covid, beds, _ = records[(hospital, week)]
            density[i, j] = covid / beds
    clipped = int(np.sum(density > 1.0))
    density = np.clip(density, 0.0, 1.0)
    dates = [_dt.date.fromisoformat(w) for w in weeks]
    gaps = sum(1 for a, b in zip(dates, dates[1:], strict=False) if (b - a).days != 7)
    usable_rows = sum(1 for r in records.values() if r[2])
    report = {
        "rows_read": rows_read,
        "rows_state": rows_state,
        "rows_outside_dates": rows_outside,
        "rows_duplicate": duplicates,
        "rows_usable": usable_rows,
        "rows_unusable": len(records) - usable_rows,
        "row_reasons": dict(sorted(reasons.items())),
        "weeks": len(weeks),
        "week_gaps": gaps,
        "hospitals_state": len(hospitals_all),
        "hospitals_kept": len(kept),
        "hospitals_dropped_missing_weeks": len(missing_weeks),
        "hospitals_dropped_unusable_values": len(unusable),
        "cells_clipped_to_1": clipped,
    }
    source = (
        f"real HHS facility data: {path.name}, {state}, {len(weeks)} weeks "
        f"{weeks[0]}..{weeks[-1]}, {len(kept)} hospitals with a complete series"
    )
    return CovidData(
        density,
        tuple(weeks),
        tuple(kept),
        tuple(names.get(h, "") for h in kept),
        state,
        source,
        report,
    )


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


def shared_covid_dir(option: str | os.PathLike = "") -> Path | None:
    """The folder holding real HHS facility extracts, or None if there is none.

    ``option`` if given (a folder), else the first existing of ``$LDPJAX_SHARED_DATA/covid``,
    ``./../shared/data/covid`` (relative to the working directory) and
    ``<repository>/../shared/data/covid`` (the layout of this project's checkout).
    """
    if option:
        path = Path(option)
        if path.is_dir() and (path / "covid").is_dir():
            path = path / "covid"
        return path if path.is_dir() else None
    candidates = []
    if os.environ.get("LDPJAX_SHARED_DATA"):
        candidates.append(Path(os.environ["LDPJAX_SHARED_DATA"]) / "covid")
    candidates += [
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


# --------------------------------------------------------------------------- synthetic
def _wave_template(weeks: Array, centres: Array, widths: Array, heights: Array) -> Array:
    """BASELINE + sum_j heights_j exp(-(k - centres_j)^2 / (2 widths_j^2)); broadcasting.

    The sum over the (few) waves is an explicit sequence of additions, not a ``jnp.sum``: on
    jaxlib 0.10.2 CPU, XLA's YNN fusion of broadcast -> exp -> reduce -> add returns wrong
    values beyond ~32k outputs (a 148 x 293 template was corrupted from row 111 on). The
    test suite checks the jitted generator against an op-by-op evaluation.
    """
    total = jnp.full(jnp.broadcast_shapes(weeks.shape[:-1], centres.shape[:-1]), BASELINE)
    for j in range(centres.shape[-1]):
        z = (weeks[..., 0] - centres[..., j]) / widths[..., j]
        total = total + heights[..., j] * jnp.exp(-0.5 * z * z)
    return total


def synthetic_covid(
    key: PRNGKey,
    state: str,
    num_weeks: int = SYNTHETIC_WEEKS,
    num_hospitals: int | None = None,
    wave_heterogeneity: float = WAVE_AMPLITUDE_LOG_SD,
) -> Array:
    """The synthetic stand-in density matrix (num_weeks, num_hospitals) in [0, 1].

    A pure function of ``key`` (see the module docstring for the model and its calibration).

    Args:
      key: PRNG key.
      state: ``"NM"``, ``"PA"`` or ``"CA"`` (fixes the hospital count and the level scale).
      num_weeks: weeks from 2020-07-31, >= 1 (148 in the paper).
      num_hospitals: override the state's hospital count (>= 2).
      wave_heterogeneity: sd of the log per-hospital, per-wave amplitudes b_ij (default 0.35),
        i.e. how much the ranking of hospitals changes from wave to wave. Only for sensitivity
        analyses (``experts-covid``'s dynamics sweep); the default is the documented stand-in.

    Randomness: every draw comes from one standard-normal pool ``normal(key, (P,))`` whose size
    P is a power of two >= 2^16 (one compiled random kernel serves every state, which matters
    for threefry's compile time on CPU); the "low-COVID" indicator is ``pool < Phi^-1(0.21)``,
    a Bernoulli(0.21) draw.
    """
    state = _check_state(state)
    if state not in STATE_HOSPITALS:
        raise ValueError(f"state must be one of {sorted(STATE_HOSPITALS)}; got {state!r}")
    v.check_integer("num_weeks", num_weeks, 1)
    n = STATE_HOSPITALS[state] if num_hospitals is None else num_hospitals
    v.check_integer("num_hospitals", n, 2)
    v.check_range("wave_heterogeneity", wave_heterogeneity, 0.0, 5.0)
    num_weeks, n = int(num_weeks), int(n)
    pool = _normal_pool(key, _pool_size(num_weeks, n))
    return _synthetic(pool, jnp.float32(wave_heterogeneity), state, num_weeks, n)


def _pool_size(num_weeks: int, n: int) -> int:
    needed = 2 * len(WAVES) + 3 * n + n * len(WAVES) + num_weeks * n
    return max(1 << 16, 1 << (needed - 1).bit_length())


@functools.partial(jax.jit, static_argnums=1)
def _normal_pool(key, size):
    return jax.random.normal(key, (size,), jnp.float32)


def _synthetic(pool, wave_heterogeneity, state, num_weeks, n):
    waves = jnp.asarray(WAVES, jnp.float32)
    centres0, widths, heights0 = waves[:, 0], waves[:, 1], waves[:, 2]
    num_waves = waves.shape[0]
    sizes = (num_waves, num_waves, n, n, n, n * num_waves, num_weeks * n)
    offsets = np.cumsum((0,) + sizes)
    z_shift, z_height, z_level, z_low, z_lag, z_amp, z_noise = (
        pool[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)
    )
    centres = centres0 + STATE_SHIFT_SD * z_shift
    heights = heights0 * jnp.exp(STATE_HEIGHT_LOG_SD * z_height)
    sigma = HOSPITAL_LEVEL_LOG_SD
    level = jnp.exp(-0.5 * sigma**2 + sigma * z_level)
    low = z_low < _LOW_COVID_QUANTILE  # P(N(0,1) < Phi^-1(p)) = p
    level = level * jnp.where(low, LOW_COVID_FACTOR, 1.0)
    lag = HOSPITAL_LAG_SD * z_lag
    amplitude = jnp.exp(wave_heterogeneity * z_amp.reshape(n, num_waves))
    weeks = jnp.arange(num_weeks, dtype=jnp.float32)[:, None, None]  # (T, 1, 1)
    shape = _wave_template(weeks, centres + lag[:, None], widths, heights * amplitude)  # (T, n)
    clean = level * shape
    # Calibrate the scale on the extract's weeks (always on the full 148-week calendar).
    calib_weeks = jnp.arange(*EXTRACT_WEEKS, dtype=jnp.float32)[:, None, None]
    calib = level * _wave_template(calib_weeks, centres + lag[:, None], widths, heights * amplitude)
    scale = EXTRACT_STATE_MEAN[state] / jnp.mean(calib)
    noise = WEEKLY_LOG_NOISE_SD * z_noise.reshape(num_weeks, n)
    return jnp.clip(scale * clean * jnp.exp(noise), 0.0, 1.0)


_synthetic = jax.jit(_synthetic, static_argnums=(2, 3, 4))
_LOW_COVID_QUANTILE = float(statistics.NormalDist().inv_cdf(LOW_COVID_FRACTION))


def synthetic_covid_data(
    key: PRNGKey,
    state: str,
    num_weeks: int = SYNTHETIC_WEEKS,
    seed_label: str = "",
    wave_heterogeneity: float = WAVE_AMPLITUDE_LOG_SD,
) -> CovidData:
    """:func:`synthetic_covid` wrapped as :class:`CovidData`, labelled as synthetic."""
    density = np.asarray(
        synthetic_covid(key, state, num_weeks, wave_heterogeneity=wave_heterogeneity),
        dtype=np.float64,
    )
    state = _check_state(state)
    weeks = tuple((FIRST_WEEK + _dt.timedelta(weeks=k)).isoformat() for k in range(num_weeks))
    hospitals = tuple(f"synthetic-{state}-{i:03d}" for i in range(density.shape[1]))
    label = f" ({seed_label})" if seed_label else ""
    if wave_heterogeneity != WAVE_AMPLITUDE_LOG_SD:
        label += f" [wave heterogeneity {wave_heterogeneity:g}, not the default 0.35]"
    source = (
        f"SYNTHETIC stand-in{label}: {state}, {num_weeks} weeks {weeks[0]}..{weeks[-1]}, "
        f"{density.shape[1]} hospitals, epidemic-wave model calibrated on the real 5-week "
        "HHS extract (not real data)"
    )
    report = {"synthetic": True, "hospitals_kept": density.shape[1], "weeks": num_weeks}
    return CovidData(density, weeks, hospitals, ("",) * len(hospitals), state, source, report)


__all__ = [
    "CAPACITY_COLUMN",
    "COVID_COLUMN",
    "CovidData",
    "EXTRACT_STATE_MEAN",
    "STATE_HOSPITALS",
    "SYNTHETIC_WEEKS",
    "WAVES",
    "find_hhs_files",
    "format_report",
    "load_hhs_facility",
    "shared_covid_dir",
    "synthetic_covid",
    "synthetic_covid_data",
]
