"""The paper's four claims about the COVID table, judged per reading from the summary rows.

Tolerances: a cell is "won"/"negative" when the difference exceeds 2 SE of that difference (SE
over the run's runs; RW-Meta and A&S use independent keys, so the SEs add in quadrature). For
the numeric claims the tolerance is 2 SE of our mean over the paper's cells (the cells' ratios
are independent across states and mu levels use separate grid points; we add their SEs in
quadrature and divide by the number of cells) plus the paper's two-decimal rounding propagated
to the ratio; for "about 90%" also half the spread of the paper's own per-cell ratios (what
"about" covers).

The rows are read by attribute (:class:`~ldpjax_experiments.experts_covid.rows.SummaryRow`,
or any record with the same field names).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ldpjax_experiments import verdicts as V
from ldpjax_experiments.experts_covid.readings import Reading
from ldpjax_experiments.experts_covid.rows import SE_WIN
from ldpjax_experiments.kit import judge_share, pooled_mean

NAME = "experts-covid"
PAPER_ROUNDING = 0.005  # the paper reports two decimals
LOW_MID_PRIVACY = (1.0, 0.5)  # "negative static regret at low and medium privacy"


def _why(reading: Reading, ours: float, paper: float) -> str:
    direction = "below" if ours < paper else "above"
    return f"ours is {direction} the paper's under the {reading.title} reading"


def beats_both(tag: str, mine: Sequence, runs: int) -> V.Verdict:
    """RW-Meta beats both A&S settings in every (state, finite mu) cell."""
    won = sum(r.meta_beats_both_as for r in mine)
    lost = sum(r.as_beats_meta for r in mine)
    return judge_share(
        NAME,
        f"{tag} RW-Meta beats both A&S settings (every state, finite mu)",
        won,
        len(mine),
        tolerance_note=f"share of (state, mu) cells where RW-Meta's total gain - the best "
        f"A&S setting's > {SE_WIN:g} SE of the difference ({runs} runs each); 1: every cell",
        reason=f"RW-Meta ahead in {won} of {len(mine)} cells, A&S ahead in {lost}, "
        f"{len(mine) - won - lost} within {SE_WIN:g} SE",
    )


def win_size(reading: Reading, tag: str, cells: Sequence, where: str) -> V.Verdict:
    """The size of the win: RW-Meta / best A&S over the paper's cells (paper: 1.4-2.2x)."""
    ours, se = pooled_mean(
        [r.ratio_meta_best_as for r in cells], [r.ratio_meta_best_as_se for r in cells]
    )
    paper = np.mean([r.paper_ratio_meta_best_as for r in cells])
    rounding = np.mean(
        [
            PAPER_ROUNDING
            * (1 + r.paper_ratio_meta_best_as)
            / max(r.paper_as_min_noise, r.paper_as_min_regret)
            for r in cells
        ]
    )
    return V.judge(
        NAME,
        f"{tag} RW-Meta / best A&S, mean over the paper's cells ({where})",
        ours,
        paper,
        SE_WIN * se + rounding,
        tolerance_note=f"{SE_WIN:g} SE of our mean ({se:.3g}) + paper rounding ({rounding:.2g})",
        reason=_why(reading, ours, paper),
        measure=f"RW-Meta's total gain / the best A&S setting's, mean over {len(cells)} cells "
        "(unitless; > 1: RW-Meta ahead)",
    )


def near_best_learner(reading: Reading, tag: str, cells: Sequence, where: str) -> V.Verdict:
    """RW-Meta reaches about 90% of the best learner over the paper's cells."""
    ours, se = pooled_mean(
        [r.ratio_meta_best_learner for r in cells],
        [r.ratio_meta_best_learner_se for r in cells],
    )
    ratios = [r.paper_ratio_meta_best_learner for r in cells]
    paper = float(np.mean(ratios))
    spread = (max(ratios) - min(ratios)) / 2
    rounding = np.mean(
        [
            PAPER_ROUNDING * (1 + r.paper_ratio_meta_best_learner) / r.paper_best_linear_model
            for r in cells
        ]
    )
    return V.judge(
        NAME,
        f"{tag} RW-Meta reaches about 90% of the best learner ({where})",
        ours,
        paper,
        SE_WIN * se + spread + rounding,
        tolerance_note=f"{SE_WIN:g} SE ({se:.3g}) + half the paper's spread ({spread:.3g}) + "
        f"rounding ({rounding:.2g})",
        reason=_why(reading, ours, paper),
        measure=f"RW-Meta's total gain / the best learner's, mean over {len(cells)} cells "
        "(unitless; 1: as good as the best learner)",
    )


def negative_static_regret(tag: str, lowmid: Sequence) -> V.Verdict:
    """RW-Meta has negative static regret at low and medium privacy (mu = 1, 0.5)."""
    neg = sum(r.meta_static_regret + SE_WIN * r.meta_static_regret_se < 0 for r in lowmid)
    mean_regret = float(np.mean([r.meta_static_regret for r in lowmid]))
    return judge_share(
        NAME,
        f"{tag} RW-Meta has negative static regret at mu = 1 and 0.5",
        neg,
        len(lowmid),
        tolerance_note=f"share of (state, mu) cells where RW-Meta's static regret (gain of "
        f"the best static hospital - RW-Meta's) + {SE_WIN:g} SE < 0; 1: every cell",
        reason=f"negative in {neg} of {len(lowmid)} cells; mean static regret "
        f"{mean_regret:.1f} (best static hospital - RW-Meta)",
    )


def judge_readings(rows: Sequence, readings: Sequence[Reading], runs: int) -> list[V.Verdict]:
    """Four claims per reading, computed from the summary rows (see the module docstring)."""
    out = []
    for reading in readings:
        mine = [r for r in rows if r.reading == reading.title and math.isfinite(r.mu)]
        if not mine:
            continue
        tag = f"[{reading.title}]"
        out.append(beats_both(tag, mine, runs))
        cells = [r for r in mine if r.paper_rw_meta is not None]
        if cells:
            where = ", ".join(f"{r.state} mu={r.mu:g}" for r in cells)
            out.append(win_size(reading, tag, cells, where))
            out.append(near_best_learner(reading, tag, cells, where))
        lowmid = [r for r in mine if r.mu in LOW_MID_PRIVACY]
        if lowmid:
            out.append(negative_static_regret(tag, lowmid))
    return out


__all__ = [
    "LOW_MID_PRIVACY",
    "NAME",
    "PAPER_ROUNDING",
    "beats_both",
    "judge_readings",
    "near_best_learner",
    "negative_static_regret",
    "win_size",
]
