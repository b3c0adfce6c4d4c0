"""``ldpjax.datasets.bandits`` (ASOS, OBD) on tiny fixtures written by the test."""

from __future__ import annotations

import numpy as np
import pytest

import ldpjax.datasets as datasets
from ldpjax.datasets import bandits as B

ASOS_HEADER = ("experiment_id,variant_id,metric_id,time_since_start,count_c,count_t,mean_c,"
               "mean_t,variance_c,variance_t\n")
ASOS_ROWS = [
    "e1,1,1,1,50,40,0.2,0.3,0.1,0.1",
    "e1,1,1,3,100,90,0.2,0.25,0.1,0.1",  # the final checkpoint of variant 1
    "e1,2,1,3,100,80,0.2,0.1,0.1,0.1",
    "e1,1,2,3,100,90,5.0,6.0,0.1,0.1",  # another metric: ignored
    "e2,1,1,2,10,10,0.5,1.5,0.1,0.1",  # mean outside [0, 1]: skipped
    "e3,1,1,2,30,20,0.4,0.6,0.1,0.1",
]


def test_load_asos_keeps_the_final_checkpoints(tmp_path):
    folder = tmp_path / "asos"
    folder.mkdir()
    (folder / B.ASOS_FILE.name).write_text(ASOS_HEADER + "\n".join(ASOS_ROWS) + "\n")
    data = B.load_asos(tmp_path)  # a data folder holding asos/...csv
    assert data.experiment_ids == ["e1", "e3"]
    assert data.num_arms.tolist() == [3, 2] and data.visitors.tolist() == [270.0, 50.0]
    np.testing.assert_allclose(data.ctr, [[0.2, 0.25, 0.1], [0.4, 0.6, np.nan]])
    assert data.skipped == {"mean outside [0, 1]": 1}
    assert datasets.load_asos is B.load_asos


def test_load_asos_bad_files(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("experiment_id,variant_id\ne1,1\n")
    with pytest.raises(ValueError, match="missing column"):
        B.load_asos(path)
    path.write_text(ASOS_HEADER + "e1,1,1,x,1,1,0.1,0.1,0.1,0.1\n")
    with pytest.raises(ValueError, match="line 2, column 'time_since_start'"):
        B.load_asos(path)
    with pytest.raises(ValueError, match="does not exist"):
        B.load_asos(tmp_path / "absent.csv")


def test_load_obd_counts_and_smooths(tmp_path):
    path = tmp_path / "all.csv"
    path.write_text("item_id,click,position\n" + "".join(f"{i % 3},{int(i % 5 == 0)},1\n" for i in range(30)))
    items = B.load_obd(path)
    assert items.item_ids.tolist() == [0, 1, 2] and items.shows.tolist() == [10.0, 10.0, 10.0]
    assert items.clicks.sum() == 6 and np.all((items.smoothed_ctr > 0) & (items.smoothed_ctr < 1))
    a, b = items.prior
    assert a / (a + b) == pytest.approx(0.2)
    path.write_text("item_id,click\n0,2\n")
    with pytest.raises(ValueError, match="click 0/1"):
        B.load_obd(path)
    assert datasets.load_obd is B.load_obd
