"""``ldpjax.datasets.census`` on a tiny census2000-format fixture written by the test."""

from __future__ import annotations

import bz2

import numpy as np
import pytest

from ldpjax.datasets import census


def test_reads_plain_and_bz2(tmp_path):
    text = "state,lweekinc,educ\nOhio,6.5,12\nIowa,5.0,10\nOhio,7.0,16\n"
    (tmp_path / "c.csv").write_text(text)
    (tmp_path / "c.csv.bz2").write_bytes(bz2.compress(text.encode()))
    for name in ("c.csv", "c.csv.bz2"):
        groups = census.load_census2000(tmp_path / name)
        assert list(groups) == ["Iowa", "Ohio"]
        np.testing.assert_array_equal(groups["Ohio"], [6.5, 7.0])
    assert census.load_census2000(tmp_path / "c.csv", column="educ")["Iowa"].tolist() == [10.0]
    assert census.load_census2000 is census.load_census2000


def test_bad_files_raise(tmp_path):
    (tmp_path / "c.csv").write_text("state,lweekinc\nOhio,rich\n")
    with pytest.raises(ValueError, match="line 2"):
        census.load_census2000(tmp_path / "c.csv")
    (tmp_path / "d.csv").write_text("state,other\nOhio,1\n")
    with pytest.raises(ValueError, match="must have columns"):
        census.load_census2000(tmp_path / "d.csv")
    with pytest.raises(ValueError, match="does not exist"):
        census.load_census2000(tmp_path / "absent.csv")
