"""The COVID-19 hospital task of "Prediction with Expert Advice under Local
Differential Privacy" (ICLR 2026): the HHS facility loader and a synthetic stand-in.

Task (Sec. 6 of the paper): each week predict which hospital of a state reports the highest COVID
patient density (COVID inpatients / inpatient beds, in [0, 1]); the gain of a hospital is its true
density that week, so a gain matrix is weeks x hospitals.

**Loader**: :func:`load_hhs_facility` reads the US HHS facility file (weeks x hospitals
density, with a report of what it dropped); it lives in :mod:`ldpjax.datasets.covid` with
:class:`CovidData`, :func:`format_report`, :func:`shared_covid_dir` and :func:`find_hhs_files`,
re-exported here.

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
"""

from __future__ import annotations

import datetime as _dt
import functools
import statistics

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.datasets.covid import (
    CAPACITY_COLUMN,
    COVID_COLUMN,
    SUPPRESSED,
    CovidData,
)
from ldpjax.datasets.covid import check_state as _check_state
from ldpjax.types import Array, PRNGKey

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
    "SUPPRESSED",
    "COVID_COLUMN",
    "EXTRACT_STATE_MEAN",
    "STATE_HOSPITALS",
    "SYNTHETIC_WEEKS",
    "WAVES",
    "synthetic_covid",
    "synthetic_covid_data",
]
