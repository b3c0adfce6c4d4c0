"""COVID task data: the HHS facility loader (exact counts on the real 5-week extract, computed
independently here and checked against its SOURCE.md; suppressed / NA / zero-capacity cells;
malformed files, missing columns, unknown states) and the synthetic stand-in (shape, range,
purity, and its calibration constants recomputed from the real extract)."""

from __future__ import annotations

import csv
import math
from collections import defaultdict

import jax
import numpy as np
import pytest

from ldpjax.datasets import covid as covid_data
from ldpjax.experts import covid as C

EXTRACT = "covid/hhs_facility_NM_PA_CA_2022-09-23_to_2022-10-21.csv"


# --------------------------------------------------------------------------- real extract
def independent_counts(path, state):
    """Recount with csv.DictReader and a deliberately different code path."""
    per_hospital = defaultdict(dict)
    reasons = defaultdict(int)
    rows = 0
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["state"] != state:
                continue
            rows += 1
            cov, cap = row["inpatient_beds_used_covid_7_day_avg"], row["inpatient_beds_7_day_avg"]
            ok = True
            if cov == "-999999":
                reasons["covid_suppressed"] += 1
                ok = False
            elif cov in ("", "NA"):
                reasons["covid_missing"] += 1
                ok = False
            if cap == "-999999":
                reasons["capacity_suppressed"] += 1
                ok = False
            elif cap in ("", "NA"):
                reasons["capacity_missing"] += 1
                ok = False
            elif float(cap) <= 0:
                reasons["capacity_zero"] += 1
                ok = False
            value = float(cov) / float(cap) if ok else None
            per_hospital[row["hospital_pk"]][row["collection_week"]] = value
    weeks = sorted({w for h in per_hospital.values() for w in h})
    kept = sorted(h for h, d in per_hospital.items() if all(d.get(w) is not None for w in weeks))
    matrix = np.array([[per_hospital[h][w] for h in kept] for w in weeks])
    return rows, dict(reasons), len(per_hospital), kept, weeks, matrix


@pytest.mark.parametrize(
    "state,hospitals,kept", [("NM", 40, 10), ("PA", 177, 98), ("CA", 354, 150)]
)
def test_real_extract_exact_counts(shared_data, state, hospitals, kept):
    # (hospitals, kept) are the numbers of the data's SOURCE.md table ("hospitals", "both of
    # those"); everything else is recomputed independently above.
    path = shared_data / EXTRACT
    data = covid_data.load_hhs_facility(path, state)
    rows, reasons, n_hosp, kept_ids, weeks, matrix = independent_counts(path, state)
    r = data.report
    assert (
        (r["hospitals_state"], r["hospitals_kept"]) == (hospitals, kept) == (n_hosp, len(kept_ids))
    )
    assert r["rows_state"] == rows == 5 * hospitals
    assert r["row_reasons"] == reasons
    assert r["rows_usable"] + r["rows_unusable"] == rows
    assert r["hospitals_dropped_missing_weeks"] == 0  # every hospital reports all 5 weeks
    assert r["hospitals_dropped_unusable_values"] == hospitals - kept
    assert (
        data.weeks
        == tuple(weeks)
        == ("2022-09-23", "2022-09-30", "2022-10-07", "2022-10-14", "2022-10-21")
    )
    assert data.hospitals == tuple(kept_ids)
    np.testing.assert_allclose(data.density, np.clip(matrix, 0, 1), rtol=1e-12)
    assert data.density.shape == (5, kept)
    assert "real HHS" in data.source and state in data.source
    assert str(kept) in covid_data.format_report(data)


def test_real_extract_known_cells(shared_data):
    # PA: 5 zero-capacity rows; CA: 5 suppressed capacities, 11 zero capacities, 4 NA covid.
    pa = covid_data.load_hhs_facility(shared_data / EXTRACT, "pa")  # case-insensitive state
    assert pa.report["row_reasons"]["capacity_zero"] == 5
    ca = covid_data.load_hhs_facility(shared_data / EXTRACT, "CA")
    assert ca.report["row_reasons"]["covid_missing"] == 4
    assert ca.report["row_reasons"]["capacity_suppressed"] == 5


# --------------------------------------------------------------------------- crafted files
HEADER = "hospital_pk,collection_week,state,hospital_name,inpatient_beds_7_day_avg,inpatient_beds_used_covid_7_day_avg\n"


def write(tmp_path, body, header=HEADER, name="f.csv"):
    path = tmp_path / name
    path.write_text(header + body)
    return path


def test_suppressed_na_zero_capacity_missing_week_duplicates_and_clipping(tmp_path):
    body = (
        # A: complete and clean; its second week has covid > beds -> clipped to 1
        "A,2020-08-07,NM,Alpha,10,2\nA,2020/08/14 12:00:00 AM,NM,Alpha,10,12\n"
        # B: suppressed covid in week 2
        "B,2020-08-07,NM,Beta,20,5\nB,2020-08-14,NM,Beta,20,-999999\n"
        # C: NA covid in week 1, empty capacity in week 2
        "C,2020-08-07,NM,Gamma,20,NA\nC,2020-08-14,NM,Gamma,,3\n"
        # D: zero capacity
        "D,2020-08-07,NM,Delta,0,0\nD,2020-08-14,NM,Delta,5,1\n"
        # E: missing week 2 entirely
        "E,2020-08-07,NM,Eps,5,1\n"
        # F: complete, with a duplicate row (kept: first)
        "F,2020-08-07,NM,Phi,4,1\nF,2020-08-07,NM,Phi,4,3\nF,2020-08-14,NM,Phi,8,2.0\n"
        # other state
        "G,2020-08-07,TX,Other,5,1\n"
    )
    data = covid_data.load_hhs_facility(write(tmp_path, body), "NM")
    assert data.hospitals == ("A", "F")
    assert data.weeks == ("2020-08-07", "2020-08-14")
    np.testing.assert_allclose(data.density, [[0.2, 0.25], [1.0, 0.25]])
    r = data.report
    assert r["rows_read"] == 13 and r["rows_state"] == 12 and r["rows_duplicate"] == 1
    assert r["row_reasons"] == {
        "covid_suppressed": 1,
        "covid_missing": 1,
        "capacity_missing": 1,
        "capacity_zero": 1,
    }
    assert r["hospitals_state"] == 6 and r["hospitals_kept"] == 2
    assert r["hospitals_dropped_missing_weeks"] == 1 and r["hospitals_dropped_unusable_values"] == 3
    assert r["cells_clipped_to_1"] == 1
    assert data.hospital_names == ("Alpha", "Phi")


def test_start_end_select_weeks(tmp_path):
    body = "A,2020-08-07,NM,a,10,1\nA,2020-08-14,NM,a,10,2\nA,2020-08-21,NM,a,10,-999999\n"
    data = covid_data.load_hhs_facility(write(tmp_path, body), "NM", start="2020-08-07", end="2020-08-14")
    assert data.weeks == ("2020-08-07", "2020-08-14") and data.report["rows_outside_dates"] == 1
    with pytest.raises(ValueError, match="complete series|usable value"):
        covid_data.load_hhs_facility(write(tmp_path, body), "NM")
    with pytest.raises(ValueError, match="start must be <= end"):
        covid_data.load_hhs_facility(write(tmp_path, body), "NM", start="2020-09-01", end="2020-08-01")


@pytest.mark.parametrize(
    "body,header,match",
    [
        ("A,2020-08-07,NM,a,10\n", HEADER, "line 2: expected 6"),  # too few fields
        ("A,2020-08-07,NM,a,10,1,extra\n", HEADER, "expected 6"),  # too many
        ("A,2020-08-07,NM,a,ten,1\n", HEADER, "inpatient_beds_7_day_avg.*must be a number"),
        ("A,07/08/2020,NM,a,10,1\n", HEADER, "collection_week must be a date"),
        ("A,2020-13-07,NM,a,10,1\n", HEADER, "invalid collection_week"),
        ("", HEADER, "no data rows"),
        ("", "", "empty"),
        (
            "A,2020-08-07,NM,10\n",
            "hospital_pk,collection_week,state,inpatient_beds_7_day_avg\n",
            "missing required column.*inpatient_beds_used_covid_7_day_avg",
        ),
        ("A,2020-08-07,NM,a,10,1\n", HEADER, "state 'CA' does not occur.*\\['NM'\\]"),
    ],
)
def test_bad_files_raise_clear_errors(tmp_path, body, header, match):
    path = tmp_path / "bad.csv"
    path.write_text(header + body)
    state = "CA" if "does not occur" in match else "NM"
    with pytest.raises(ValueError, match=match):
        covid_data.load_hhs_facility(path, state)


def test_bad_arguments_and_binary_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        covid_data.load_hhs_facility(tmp_path / "nope.csv", "NM")
    with pytest.raises(ValueError, match="two-letter"):
        covid_data.load_hhs_facility(tmp_path / "nope.csv", "New Mexico")
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(ValueError, match="UTF-8|malformed|column"):
        covid_data.load_hhs_facility(binary, "NM")


# --------------------------------------------------------------------------- synthetic
def test_synthetic_shapes_range_and_purity():
    key = jax.random.key(0)
    for state, n in C.STATE_HOSPITALS.items():
        g = np.asarray(C.synthetic_covid(key, state))
        assert g.shape == (148, n)
        assert g.min() >= 0 and g.max() <= 1 and np.isfinite(g).all()
    a = np.asarray(C.synthetic_covid(jax.random.key(1), "NM"))
    np.testing.assert_array_equal(a, np.asarray(C.synthetic_covid(jax.random.key(1), "NM")))
    assert not np.allclose(a, np.asarray(C.synthetic_covid(jax.random.key(2), "NM")))
    assert C.synthetic_covid(key, "NM", num_weeks=20, num_hospitals=5).shape == (20, 5)
    data = C.synthetic_covid_data(key, "PA", seed_label="seed 0")
    assert (
        "SYNTHETIC" in data.source and data.weeks[0] == "2020-07-31" and data.num_hospitals == 146
    )
    with pytest.raises(ValueError, match="state must be one of"):
        C.synthetic_covid(key, "TX")
    with pytest.raises(ValueError, match="num_weeks"):
        C.synthetic_covid(key, "NM", num_weeks=0)


def test_compiled_wave_template_equals_numpy():
    # Guards against the jaxlib 0.10.2 CPU miscompile (YNN reduce fusion) that corrupted a
    # 148 x 293 wave template from row 111 on when it was written as one jnp.sum.
    rng = np.random.default_rng(0)
    centres = rng.normal(50, 30, (293, 6)).astype(np.float32)
    widths = rng.uniform(3, 6, 6).astype(np.float32)
    heights = rng.uniform(0.1, 1, (293, 6)).astype(np.float32)
    weeks = np.arange(148, dtype=np.float32)[:, None, None]
    ref = C.BASELINE + (heights * np.exp(-0.5 * ((weeks - centres) / widths) ** 2)).sum(-1)
    out = np.asarray(jax.jit(C._wave_template)(weeks, centres, widths, heights))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_synthetic_has_several_waves_and_calibrated_level():
    keys = jax.random.split(jax.random.key(3), 20)
    series = np.stack([np.asarray(C.synthetic_covid(k, "CA")).mean(1) for k in keys])  # (20, 148)
    for s in series:
        peaks = [
            t
            for t in range(1, 147)
            if s[t] >= s[t - 1] and s[t] > s[t + 1] and s[t] > 1.5 * s.min()
        ]
        smooth_peaks = [t for t in peaks if s[t] == s[max(0, t - 4) : t + 5].max()]
        assert len(smooth_peaks) >= 4  # several waves of differing height and timing
    # The calibration weeks (2022-09-23..10-21) average the extract's CA mean (0.049) times
    # E[exp(noise)] = exp(0.19^2 / 2) = 1.018, up to hospital sampling (20 states x 293
    # hospitals; 10% tolerance).
    calib = series[:, 112:117].mean()
    assert calib == pytest.approx(0.049 * math.exp(0.19**2 / 2), rel=0.1)


def test_calibration_constants_match_the_real_extract(shared_data):
    path = shared_data / EXTRACT
    log_sds, zero, total, changes = [], 0, 0, []
    for state in ("NM", "PA", "CA"):
        _, _, _, _, _, matrix = independent_counts(path, state)
        assert matrix.mean() == pytest.approx(C.EXTRACT_STATE_MEAN[state], abs=5e-4)
        level = matrix.mean(0)
        positive = level > 0
        log_sds.append(np.log(level[positive] / matrix.mean()).std())
        zero += int(np.sum(~positive))
        total += level.size
        m = matrix[:, (matrix > 0).all(0)]
        changes.append(np.diff(np.log(m), axis=0).std())
    assert min(log_sds) <= C.HOSPITAL_LEVEL_LOG_SD <= max(log_sds)
    assert zero / total == pytest.approx(C.LOW_COVID_FRACTION, abs=0.005)
    assert C.WEEKLY_LOG_NOISE_SD == pytest.approx(np.mean(changes) / math.sqrt(2), abs=0.01)
