"""Golden tests of ``quantile-coverage``'s report on a tiny study built by hand.

Normal data, tau = 0.3, r = hetero, t_T in {2000, 10000}, methods C1, DP-SGD and DC, 100
replications: the three t_T = 10000 cells are cells of the paper's Hete-L table (C1: ECP 0.949,
MAE 0.0096; DP-SGD: 0.947, 0.0142; DC: 0.898, 0.1302). Every tolerance and verdict is worked
out in a comment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ldpjax_experiments.quantile_coverage import CoverageStudy, Setting, report

METHODS = ["C1", "DP-SGD", "DC"]
PAPER = {"C1": (0.949, 0.0096), "DP-SGD": (0.947, 0.0142), "DC": (0.898, 0.1302)}


def _row(method, t_T, ecp, mae, mae_se, theory_sd=0.012):
    paper = PAPER[method] if t_T == 10000 else (None, None)
    return {"distribution": "normal", "t_T": t_T, "tau": 0.3, "r": "hetero", "method": method,
            "ecp": ecp, "ecp_se": 0.02, "mae": mae, "mae_se": mae_se, "rmse": mae,
            "ci_length": 0.05, "theory_sd": theory_sd, "paper_ecp": paper[0],
            "paper_mae": paper[1], "q_star": 0.1}


def _curve(method, samples, ecp, mae):
    return {"distribution": "normal", "tau": 0.3, "r": "hetero", "method": method,
            "samples": samples, "ecp": ecp, "ecp_se": 0.02, "mae": mae, "mae_se": 0.001,
            "rmse": mae, "ci_length": 0.05}


def _sweep(method, r, mae):
    return {"distribution": "normal", "t_T": 2000, "tau": 0.3, "r": r, "method": method,
            "ecp": 0.95, "ecp_se": 0.02, "mae": mae, "mae_se": 0.001, "rmse": mae,
            "ci_length": 0.05, "theory_sd": 0.02 / r}


def _study(c1_mae=0.0096, dc_ecp=0.5, sweep_maes=(0.05, 0.01), **changes) -> CoverageStudy:
    setting = Setting(clients=2, taus=[0.3], rate_names=["hetero"],
                      rates=[np.array([0.25, 0.9])], budgets=[2000, 10000], methods=METHODS,
                      level=0.95)
    rows = [
        _row("C1", 2000, 0.95, 0.02, 0.001),
        _row("C1", 10000, 0.95, c1_mae, 0.001),
        _row("DP-SGD", 10000, 0.947, 0.0142, 0.001),
        _row("DC", 10000, dc_ecp, 0.1302, 0.01),
    ]
    curves = [_curve(m, s, 0.9, 0.02 * 5000 / s) for m in METHODS for s in (5000, 10000)]
    sweep = [_sweep(m, r, mae) for m in METHODS for r, mae in zip((0.25, 1.0), sweep_maes, strict=True)]
    s = CoverageStudy(
        setting=setting, rows=rows, curves=curves, sweep_rows=sweep,
        locations=np.array([0.5, -0.25]), critical_value=6.747, distributions=("normal",),
        locations_source="authors", fixed_data=False, dc_lr_scale=2.0, seeds=100,
        data_label="synthetic", data_text="synthetic: tiny", data_caption="SYNTHETIC tiny",
    )
    return s._replace(**changes)


def _v(result, claim_start):
    (v,) = [v for v in result.verdicts if v.claim.startswith(claim_start)]
    return v


@pytest.fixture(scope="module")
def passing():
    return report(_study())


def test_tables_are_the_study_rows_and_extras(passing):
    s = _study()
    assert passing.tables == {"hete_l": s.rows, "by_budget": s.curves, "by_rate": s.sweep_rows}
    assert passing.extra == {"critical_value": 6.747, "locations": [0.5, -0.25]}
    assert passing.data == "synthetic: tiny"


def test_paper_cells_by_hand(passing):
    assert len(passing.verdicts) == 11  # 3 cells x (ECP, MAE) + 5 findings
    ecp = _v(passing, "ECP of C1, t_T=10000, tau=0.3, r=hetero")
    # 2 sqrt(0.949 * 0.051 * (1/100 + 1/1000)) + 0.0005 = 2 * 0.0230736 + 0.0005 = 0.0466472
    assert ecp.tolerance == pytest.approx(0.0466472, rel=1e-5)
    assert ecp.status == "reproduced" and (ecp.ours, ecp.paper) == (0.95, 0.949)  # gap 0.001
    mae = _v(passing, "MAE of C1")
    # 2 * 0.001 * sqrt(1 + 100/1000) + 0.00005 = 0.002 * 1.0488088 + 0.00005 = 0.00214762
    assert mae.tolerance == pytest.approx(0.00214762, rel=1e-5)
    assert mae.status == "reproduced"
    dc = _v(passing, "ECP of DC")
    # 2 sqrt(0.898 * 0.102 * 0.011) + 0.0005 = 0.0639842; |0.5 - 0.898| = 0.398 > 3 tol: not
    assert dc.tolerance == pytest.approx(0.0639842, rel=1e-5)
    assert dc.status == "not" and dc.reason.startswith("Not reproducible from public code")
    assert _v(passing, "MAE of DC").status == "reproduced"  # 0.1302 = 0.1302


def test_findings_pass(passing):
    smallest = _v(passing, "C1 has the smallest MAE")
    # one cell: 0.0096 <= 0.0142 + 2 hypot(0.001, 0.001) and <= DP-SGD only (DC is not federated)
    assert smallest.status == "reproduced" and smallest.ours == 1.0
    by_t = _v(passing, "C1's MAE falls as t_T grows")
    assert by_t.status == "reproduced" and by_t.ours == 1.0  # 0.0096 < 0.02
    by_r = _v(passing, "C1's MAE falls as r grows")
    assert by_r.status == "reproduced" and by_r.ours == pytest.approx(0.2)  # 0.01 / 0.05
    theorem = _v(passing, "Theorem 3.1")
    # sqrt(2/pi) * 0.012 = 0.7978846 * 0.012 = 0.00957461; |0.0096 - it| <= 2 * 0.001
    assert theorem.paper == pytest.approx(0.00957461, rel=1e-6)
    assert theorem.status == "reproduced" and theorem.tolerance == pytest.approx(0.002)
    dc = _v(passing, "DC's coverage breaks down")
    # 0.5 < 0.95 - 3 sqrt(0.95 * 0.05 / 100) = 0.8846
    assert dc.status == "reproduced" and dc.ours == 1.0


def test_findings_fail():
    bad = report(_study(c1_mae=0.03, dc_ecp=0.949, sweep_maes=(0.01, 0.05)))
    assert _v(bad, "MAE of C1").status == "not"  # |0.03 - 0.0096| = 0.0204 > 3 * 0.00215
    # 0.03 > 0.0142 + 2 * 0.001414 = 0.01703
    assert _v(bad, "C1 has the smallest MAE").status == "not"
    assert _v(bad, "C1's MAE falls as t_T grows").status == "not"  # 0.03 > 0.02
    by_r = _v(bad, "C1's MAE falls as r grows")
    assert by_r.status == "not" and by_r.ours == pytest.approx(5.0)  # 0.05 / 0.01
    # |0.03 - 0.00957| = 0.0204 > 3 * 0.002
    assert _v(bad, "Theorem 3.1").status == "not"
    dc = _v(bad, "DC's coverage breaks down")
    assert dc.status == "not" and dc.ours == 0.0  # 0.949 >= 0.8846
    assert _v(bad, "ECP of DC").status == "reproduced"  # |0.949 - 0.898| = 0.051 <= 0.064


def test_summary_labels_and_figures(passing):
    assert passing.summary.startswith(
        "Hete-L table with 100 replications per cell, t_T in [2000, 10000], nominal 95%, methods "
        "['C1', 'DP-SGD', 'DC']. Fresh data in every replication. DC's step constant c0 = 2. ")
    # reproduced: C1 and DP-SGD ECP and MAE, DC's MAE (5) + the 5 findings; not: DC's ECP
    assert "Verdicts: 10 reproduced, 0 partly, 1 not (of 11 paper claims)." in passing.summary
    assert {v.data for v in passing.verdicts} == {"synthetic"}
    fixed = report(_study(fixed_data=True, data_label="synthetic stand-in"))
    assert "Fixed data: one dataset per (distribution, t_T)" in fixed.summary
    assert {v.data for v in fixed.verdicts} == {"synthetic stand-in"}
    for fig in passing.figures.values():
        assert "Data: SYNTHETIC tiny." in fig.get_suptitle()
        FigureCanvasAgg(fig).draw()
    _, labels = passing.figures["coverage_mae_vs_r"].axes[1].get_legend_handles_labels()
    # one entry per method (error-bar containers) and the theory line, each once
    assert sorted(labels) == sorted([*METHODS, "Thm 3.1 (C1 MAE)"])
    assert math.isclose(passing.extra["critical_value"], 6.747)
