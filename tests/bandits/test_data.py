"""ASOS and OBD loaders (real files via the shared_data fixture; malformed files in tmp_path)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import betaln

import ldpjax.datasets as datasets
from ldpjax import bandits
from ldpjax.bandits.data import top_items
from ldpjax.datasets.bandits import fit_beta_prior
from ldpjax.engine import make_key

HEADER = ("experiment_id,variant_id,metric_id,time_since_start,count_c,count_t,mean_c,mean_t,"
          "variance_c,variance_t\n")


def test_asos_matches_published_facts_and_independent_reading(shared_data):
    path = shared_data / "asos" / "asos_digital_experiments_dataset.csv"
    data = datasets.load_asos(shared_data)
    # SOURCE.md: 78 experiments, 61/14/2/1 with 1/2/3/4 treatments, visitors min 69,123,
    # mean 21.09M, max 149,197,471; metric-1 control means 0.0265..0.7724
    assert len(data.experiment_ids) == 78
    assert np.bincount(data.num_arms, minlength=6)[2:].tolist() == [61, 14, 2, 1]
    assert data.visitors.min() == 69_123 and data.visitors.max() == 149_197_471
    assert data.visitors.mean() == pytest.approx(21.09e6, rel=1e-3)
    assert np.nanmin(data.ctr[:, 0]) == pytest.approx(0.0265, abs=1e-4)
    assert np.nanmax(data.ctr[:, 0]) == pytest.approx(0.7724, abs=1e-4)
    assert data.skipped == {"non-positive count": 2}
    # independent reading with numpy.genfromtxt: last metric-1 checkpoint per (exp, variant)
    raw = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    raw = raw[(raw["metric_id"] == 1) & (raw["count_c"] > 0) & (raw["count_t"] > 0)]
    for i in (0, 17, 42, 77):
        exp = data.experiment_ids[i]
        rows = raw[raw["experiment_id"] == exp]
        variants = np.unique(rows["variant_id"])
        last = [rows[rows["variant_id"] == v][np.argmax(rows[rows["variant_id"] == v][
            "time_since_start"])] for v in variants]
        assert data.num_arms[i] == 1 + len(variants)
        assert data.visitors[i] == last[0]["count_c"] + sum(r["count_t"] for r in last)
        assert data.ctr[i, 0] == pytest.approx(last[0]["mean_c"])
        assert np.allclose(data.ctr[i, 1 : data.num_arms[i]], [r["mean_t"] for r in last])
        assert np.all(np.isnan(data.ctr[i, data.num_arms[i]:]))


def test_asos_reports_and_skips_bad_rows(tmp_path):
    path = tmp_path / "asos.csv"
    path.write_text(
        HEADER
        + "aaa,1,1,1.0,100,110,0.30,0.31,0.2,0.2\n"
        + "aaa,1,1,2.0,200,210,0.32,0.33,0.2,0.2\n"
        + "aaa,1,1,3.0,300,310,0.34,0.35,nan,0.2\n"  # NaN variance: skipped
        + "aaa,2,1,2.0,200,190,0.32,0.29,0.2,0.2\n"
        + "aaa,2,1,2.5,0,190,0.32,0.29,0.2,0.2\n"  # zero count: skipped
        + "bbb,1,1,1.0,50,60,0.10,1.50,0.2,0.2\n"  # mean > 1: skipped
        + "bbb,1,1,0.5,40,50,0.10,0.12,0.2,0.2\n"
        + "bbb,1,2,9.0,40,50,5.0,7.0,0.2,0.2\n"  # metric 2: ignored
    )
    data = datasets.load_asos(path)
    assert data.experiment_ids == ["aaa", "bbb"]
    assert data.num_arms.tolist() == [3, 2]
    assert data.visitors.tolist() == [200 + 210 + 190, 40 + 50]
    assert np.allclose(data.ctr[0], [0.32, 0.33, 0.29])
    assert np.allclose(data.ctr[1, :2], [0.10, 0.12])
    assert data.skipped == {"NaN variance": 1, "non-positive count": 1, "mean outside [0, 1]": 1}


@pytest.mark.parametrize("body, message", [
    ("experiment_id,variant_id\naaa,1\n", "missing column"),
    (HEADER + "aaa,1,1,1.0,abc,110,0.30,0.31,0.2,0.2\n", "line 2, column 'count_c'"),
    (HEADER + "aaa,1,1,1.0,100,110\n", "line 2 has the wrong number of fields"),
    (HEADER + "aaa,1,1,1.0,100,110,0.30,0.31,0.2,0.2,9\n", "line 2 has the wrong number"),
    (HEADER, "no usable rows"),
])
def test_asos_malformed_files_raise_clear_errors(tmp_path, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    with pytest.raises(ValueError, match=message):
        datasets.load_asos(path)
    with pytest.raises(ValueError, match="does not exist"):
        datasets.load_asos(tmp_path / "missing.csv")


def test_obd_sample_and_smoothing(shared_data):
    items = datasets.load_obd(shared_data)
    # SOURCE.md: 10,000 impressions, 80 items shown 96..160 times, 38 clicks, 29 items clicked
    assert len(items.item_ids) == 80 and items.shows.sum() == 10_000
    assert items.shows.min() == 96 and items.shows.max() == 160
    assert items.clicks.sum() == 38 and np.sum(items.clicks > 0) == 29
    assert "too few clicks" in items.note
    a, b = items.prior
    assert a / (a + b) == pytest.approx(38 / 10_000)
    # the concentration maximises the beta-binomial likelihood (scipy reference on a grid)
    mean = 38 / 10_000

    def loglik(kappa):
        return np.sum(betaln(mean * kappa + items.clicks, (1 - mean) * kappa + items.shows
                             - items.clicks) - betaln(mean * kappa, (1 - mean) * kappa))

    grid = np.geomspace(10, 1e6, 2001)
    best = grid[np.argmax([loglik(k) for k in grid])]
    assert a + b == pytest.approx(best, rel=0.01)
    assert np.allclose(items.smoothed_ctr, (a + items.clicks) / (a + b + items.shows))
    top = top_items(items, 4)
    assert np.all(np.diff(top) <= 0) and top[0] == items.smoothed_ctr.max()


def test_fit_beta_prior_recovers_a_known_prior():
    # 400 items with CTRs from Beta(20, 980) (mean 0.02, concentration 1000), 5000 shows each
    rng = np.random.default_rng(0)
    ctr = rng.beta(20, 980, size=400)
    shows = np.full(400, 5000.0)
    clicks = rng.binomial(5000, ctr).astype(float)
    a, b = fit_beta_prior(shows, clicks)
    # with 400 items the concentration is estimated to within a factor of about 1.3
    assert 1000 / 1.3 <= a + b <= 1000 * 1.3
    assert a / (a + b) == pytest.approx(0.02, rel=0.05)


def test_synthetic_stand_ins_are_labelled_and_shaped():
    asos = bandits.synthetic_asos(make_key(0))
    assert len(asos.experiment_ids) == 78 and "SYNTHETIC" in asos.source
    assert asos.num_arms.min() >= 2 and asos.num_arms.max() <= 5
    assert 69_123 <= asos.visitors.min() and asos.visitors.max() <= 149_197_471
    ok = ~np.isnan(asos.ctr)
    assert np.all((asos.ctr[ok] >= 0) & (asos.ctr[ok] <= 1))
    assert np.all(ok.sum(1) == asos.num_arms)
    obd = bandits.synthetic_obd(make_key(0))
    assert "SYNTHETIC" in obd.note and "SYNTHETIC" in obd.source
    assert np.all((obd.smoothed_ctr >= 0.0012) & (obd.smoothed_ctr <= 0.0078))
    with pytest.raises(ValueError, match="^k "):
        top_items(obd, 1)
    assert not math.isnan(top_items(obd, 8)[-1])
