"""The verdict judge's boundaries, pinned from the rule in its docstring.

``judge``: ``reproduced`` if |ours - paper| <= tolerance; ``partly`` if within
partly_factor * tolerance (default 3); else ``not``; NaN is ``not``; ``reason`` kept only when
not reproduced. Every boundary is tested exactly on and one float step either side. The paper's
number is 0, so the gap |ours - 0| is ours itself and a float step of ours is a step of the gap
(with paper = 1, 1 - nextafter(-0.5) rounds back to a gap of exactly 1.5).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpjax_experiments.verdicts import (
    STATUSES,
    Verdict,
    judge,
    judge_condition,
    summary_lines,
)

PAPER, TOL = 0.0, 0.5  # exact in binary: gaps 0.5 and 1.5 are exact


def _status(ours, paper=PAPER, tol=TOL, **kw):
    return judge("exp", "claim", ours, paper, tol, **kw).status


def test_gap_equal_to_tolerance_is_reproduced_both_sides():
    assert _status(PAPER + TOL) == "reproduced"
    assert _status(PAPER - TOL) == "reproduced"
    assert _status(PAPER) == "reproduced"


def test_just_outside_the_tolerance_is_partly():
    assert _status(np.nextafter(PAPER + TOL, np.inf)) == "partly"
    assert _status(np.nextafter(PAPER - TOL, -np.inf)) == "partly"
    assert _status(np.nextafter(PAPER + TOL, -np.inf)) == "reproduced"


def test_partly_band_ends_at_three_tolerances_inclusive():
    edge = PAPER + 3 * TOL  # 2.5: gap exactly 1.5 = 3 * 0.5
    assert _status(edge) == "partly"
    assert _status(PAPER - 3 * TOL) == "partly"
    assert _status(np.nextafter(edge, -np.inf)) == "partly"
    assert _status(np.nextafter(edge, np.inf)) == "not"
    assert _status(np.nextafter(PAPER - 3 * TOL, -np.inf)) == "not"


def test_partly_factor_moves_the_band():
    assert _status(PAPER + 2 * TOL, partly_factor=2.0) == "partly"
    assert _status(np.nextafter(PAPER + 2 * TOL, np.inf), partly_factor=2.0) == "not"
    # factor 1: no partly band at all
    assert _status(PAPER + TOL, partly_factor=1.0) == "reproduced"
    assert _status(np.nextafter(PAPER + TOL, np.inf), partly_factor=1.0) == "not"


def test_zero_tolerance_means_exact():
    assert _status(PAPER, tol=0.0) == "reproduced"
    assert _status(np.nextafter(PAPER, np.inf), tol=0.0) == "not"


def test_non_finite_numbers_are_not_reproduced():
    assert _status(math.nan) == "not"
    assert _status(1.0, paper=math.nan) == "not"
    assert _status(math.inf) == "not"
    assert _status(-math.inf) == "not"


@pytest.mark.parametrize("tol", [-0.1, math.nan])
def test_bad_tolerance_raises(tol):
    with pytest.raises(ValueError, match="tolerance"):
        judge("exp", "claim", 1.0, 1.0, tol)


@pytest.mark.parametrize("factor", [0.5, math.nan])
def test_bad_partly_factor_raises(factor):
    with pytest.raises(ValueError, match="partly_factor"):
        judge("exp", "claim", 1.0, 1.0, 0.1, partly_factor=factor)


def test_reason_kept_only_when_not_reproduced():
    assert judge("e", "c", PAPER + TOL, PAPER, TOL, reason="why").reason == ""
    assert judge("e", "c", PAPER + 2 * TOL, PAPER, TOL, reason="why").reason == "why"
    assert judge("e", "c", PAPER + 4 * TOL, PAPER, TOL, reason="why").reason == "why"


def test_verdict_records_the_numbers():
    v = judge("e", "c", 1.25, 1.0, 0.5, tolerance_note="2 SE")
    assert (v.ours, v.paper, v.tolerance, v.tolerance_note) == (1.25, 1.0, 0.5, "2 SE")
    d = judge("e", "c", math.nan, 1.0, 0.5).as_dict()
    assert d["ours"] is None and d["status"] == "not"
    assert Verdict("e", "c", "partly", ours=math.inf).as_dict()["ours"] == "inf"


def test_judge_condition():
    assert judge_condition("e", "c", True).status == "reproduced"
    assert judge_condition("e", "c", True, partly=True).status == "reproduced"
    assert judge_condition("e", "c", False, partly=True).status == "partly"
    assert judge_condition("e", "c", False).status == "not"
    assert judge_condition("e", "c", True, reason="why").reason == ""
    assert judge_condition("e", "c", False, reason="why").reason == "why"


def test_status_must_be_known_and_summary_counts():
    with pytest.raises(ValueError, match="status"):
        Verdict("e", "c", "maybe")
    verdicts = [judge("e", "a", 1.0, 1.0, 0.1), judge("e", "b", 1.2, 1.0, 0.1),
                judge("e", "c", 9.0, 1.0, 0.1)]
    assert [v.status for v in verdicts] == list(STATUSES)
    assert summary_lines(verdicts).splitlines()[0] == (
        "Verdicts: 1 reproduced, 1 partly, 1 not (of 3 paper claims).")


def test_boundary_away_from_zero():
    # a paper number of 1: gaps computed by subtraction, exact here (Sterbenz)
    assert _status(1.5, paper=1.0) == "reproduced"
    assert _status(np.nextafter(1.5, 2.0), paper=1.0) == "partly"
    assert _status(2.5, paper=1.0) == "partly"
    assert _status(np.nextafter(2.5, 3.0), paper=1.0) == "not"
