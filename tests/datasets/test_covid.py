"""``ldpjax.datasets.covid`` on tiny HHS-format fixtures written by the test."""

from __future__ import annotations

import numpy as np
import pytest

from ldpjax.datasets import covid as C

HEADER = ("hospital_pk,hospital_name,collection_week,state,"
          "inpatient_beds_used_covid_7_day_avg,inpatient_beds_7_day_avg\n")
ROWS = [
    "h2,Two,2022-09-23,NM,10,100",
    "h1,One,2022/09/23,NM,5,50",
    "h1,One,2022-09-30,NM,6,50",
    "h2,Two,2022-09-30,NM,120,100",  # clipped to 1
    "h3,Three,2022-09-23,NM,-999999,10",  # suppressed: h3 unusable
    "h3,Three,2022-09-30,NM,1,10",
    "h4,Four,2022-09-23,NM,1,10",  # no second week: h4 lacks a week
    "h1,One,2022-09-30,NM,7,50",  # duplicate: the first row is kept
    "p1,P,2022-09-23,PA,1,10",
]


def _write(tmp_path, rows, header=HEADER, name="hhs.csv"):
    path = tmp_path / name
    path.write_text(header + "".join(r + "\n" for r in rows))
    return path


def test_loads_density_and_report(tmp_path):
    data = C.load_hhs_facility(_write(tmp_path, ROWS), "nm")
    assert data.weeks == ("2022-09-23", "2022-09-30") and data.hospitals == ("h1", "h2")
    assert data.hospital_names == ("One", "Two") and data.state == "NM"
    np.testing.assert_allclose(data.density, [[0.1, 0.1], [0.12, 1.0]])
    r = data.report
    assert (r["rows_read"], r["rows_state"], r["rows_duplicate"], r["cells_clipped_to_1"]) == (9, 8, 1, 1)
    assert r["row_reasons"] == {"covid_suppressed": 1}
    assert (r["hospitals_state"], r["hospitals_kept"]) == (4, 2)
    assert (r["hospitals_dropped_missing_weeks"], r["hospitals_dropped_unusable_values"]) == (1, 1)
    assert "kept 2" in C.format_report(data)
    one_week = C.load_hhs_facility(_write(tmp_path, ROWS), "NM", end="2022-09-23")
    assert one_week.weeks == ("2022-09-23",) and one_week.report["rows_outside_dates"] == 4


def test_old_path_is_the_same_loader():
    assert C.load_hhs_facility is C.load_hhs_facility and C.CovidData is C.CovidData


@pytest.mark.parametrize(
    "rows,header,state,match",
    [
        ([], HEADER, "NM", "no data rows"),
        (["h1,One,2022-09-23,NM,1"], HEADER, "NM", "expected 6 comma-separated fields"),
        (["h1,One,23-09-2022,NM,1,2"], HEADER, "NM", "collection_week must be a date"),
        (["h1,One,2022-09-23,NM,many,2"], HEADER, "NM", "must be a number"),
        (["h1,One,2022-09-23,NM,1,2"], HEADER, "CA", "does not occur"),
        (["h1,One,2022-09-23,NM,NA,2"], HEADER, "NM", "no NM hospital"),
        ([",One,2022-09-23,NM,1,2"], HEADER, "NM", "empty hospital_pk"),
        (["h1,2022-09-23,NM,1"], "hospital_pk,collection_week,state,x\n", "NM", "missing required column"),
        (ROWS, HEADER, "New Mexico", "two-letter state code"),
    ],
)
def test_bad_files_raise(tmp_path, rows, header, state, match):
    with pytest.raises(ValueError, match=match):
        C.load_hhs_facility(_write(tmp_path, rows, header), state)


def test_bad_paths_and_dates(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        C.load_hhs_facility(tmp_path / "absent.csv", "NM")
    with pytest.raises(ValueError, match="start must be <= end"):
        C.load_hhs_facility(_write(tmp_path, ROWS), "NM", start="2022-10-01", end="2022-09-01")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty"):
        C.load_hhs_facility(tmp_path / "empty.csv", "NM")


def test_finds_hhs_files(tmp_path):
    _write(tmp_path, ROWS)
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    assert [p.name for p in C.find_hhs_files(tmp_path)] == ["hhs.csv"]
    assert C.shared_covid_dir(tmp_path) == tmp_path and C.find_hhs_files(None) == []
