"""Matplotlib helpers for experiment figures (object API only: no pyplot, no display needed).

Conventions every experiment figure follows (checked by ``tests/experiments/test_figures.py``):

* every axes has an x and a y label; legends and tick labels are at least :data:`MIN_FONT`
  points at the saved size (the runner saves at the figure's own size);
* the figure names its data (real file or synthetic stand-in) and the privacy unit in a
  caption under the axes (:func:`caption`);
* stochastic curves carry standard-error bands or bars (:func:`mean_band`, :func:`mean_bars`;
  the caption says how many SE);
* curves that may coincide get distinct markers and line styles (or a ratio panel);
* the paper's reported values, where it has them, are overlaid as markers (:func:`paper_markers`);
* every plotted point lies inside its axes (nothing runs off the axis).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

PALETTE = ("#1b6ca8", "#d1495b", "#edae49", "#00798c", "#66a182", "#8d96a3", "#2e4057", "#b07aa1")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))
MIN_FONT = 8.0
SE_MULT = 2.0  # bands and bars are +- SE_MULT standard errors


def figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3, **kw: Any):
    """A ``Figure`` and its axes grid (``squeeze=False``: always 2-d), with a clean style."""
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    for ax in axes.ravel():
        ax.grid(True, alpha=0.3, linewidth=0.6)
        ax.set_prop_cycle(color=PALETTE)
        ax.tick_params(labelsize=MIN_FONT + 0.5)
        ax.xaxis.label.set_size(MIN_FONT + 1)
        ax.yaxis.label.set_size(MIN_FONT + 1)
        ax.title.set_size(MIN_FONT + 1)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, axes


def legend(ax, **kw: Any):
    """``ax.legend`` at a readable size (>= :data:`MIN_FONT` points)."""
    kw.setdefault("fontsize", MIN_FONT)
    kw["fontsize"] = max(float(kw["fontsize"]), MIN_FONT)
    kw.setdefault("framealpha", 0.85)
    return ax.legend(**kw)


def figure_legend(fig, axes, **kw: Any):
    """One legend for the whole figure, below the axes, from the labelled artists of ``axes``
    (deduplicated by label)."""
    handles, labels = [], []
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    kw.setdefault("fontsize", MIN_FONT)
    kw.setdefault("loc", "outside lower center")
    kw.setdefault("ncols", min(len(labels), 4) or 1)
    return fig.legend(handles, labels, **kw)


def caption(fig, *, data: str, unit: str, note: str = "", title: str = "", width: int = 0) -> None:
    """A caption above the axes (the figure's suptitle): an optional title line, then the data,
    the privacy unit and how to read the figure, at :data:`MIN_FONT` + 1 points.

    ``width`` wraps the text (characters; default from the figure width).
    """
    parts = [f"Data: {data}.", f"Privacy unit: {unit}."]
    if note:
        parts.append(note)
    width = width or max(60, int(fig.get_figwidth() * 15))
    lines = textwrap.wrap(" ".join(parts), width)
    if title:
        lines = [title, *lines]
    fig.suptitle("\n".join(lines), fontsize=MIN_FONT + 1)


def se_note(what: str = "error bars and shaded bands") -> str:
    return f"{what}: +-{SE_MULT:g} standard errors."


def mean_band(ax, x, mean, se, *, label: str, color=None, marker="o", ls="-", alpha=0.18,
              clip_low: float | None = None, **kw: Any):
    """A mean curve with a +-SE_MULT standard-error band."""
    x, mean, se = (np.asarray(a, np.float64) for a in (x, mean, se))
    (line,) = ax.plot(x, mean, marker=marker, ls=ls, color=color, label=label, markersize=4, **kw)
    lo, hi = mean - SE_MULT * se, mean + SE_MULT * se
    if clip_low is not None:
        lo = np.maximum(lo, clip_low)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=alpha, linewidth=0)
    return line


def mean_bars(ax, x, mean, se, *, label: str, color=None, marker="o", ls="-", log: bool = False,
              clip: tuple[float, float] | None = None, **kw: Any):
    """A mean curve with +-SE_MULT standard-error bars (on a log axis the lower bar stops at a
    twentieth of the mean, so that it stays drawable; ``clip`` bounds the bars to a range, e.g.
    (0, 1) for a proportion). Returns (container, lower, upper)."""
    x, mean, se = (np.asarray(a, np.float64) for a in (x, mean, se))
    lower, upper = mean - SE_MULT * se, mean + SE_MULT * se
    if log:
        lower = np.maximum(lower, mean / 20)
    if clip is not None:
        lower, upper = np.clip(lower, *clip), np.clip(upper, *clip)
    container = ax.errorbar(x, mean, yerr=[mean - lower, upper - mean], fmt=marker, ls=ls,
                            color=color, label=label, capsize=2.5, markersize=4, **kw)
    return container, lower, upper


def paper_markers(ax, x, y, *, label: str = "paper", color="black", marker="*", **kw: Any):
    """The paper's reported values as unfilled markers (no line)."""
    x, y = np.atleast_1d(np.asarray(x, np.float64)), np.atleast_1d(np.asarray(y, np.float64))
    kw.setdefault("markersize", 9)
    return ax.plot(x, y, marker=marker, ls="none", color=color, markerfacecolor="none",
                   markeredgewidth=1.2, label=label, **kw)


def coverage_axis(ax, level: float, *, knee: float = 0.8, factor: float = 8.0,
                  replications: int = 0) -> None:
    """A y axis for a coverage probability, stretched near the nominal ``level``: linear in two
    pieces, with [0, ``knee``] drawn ``factor`` times compressed against [``knee``, 1], so that
    curves between the knee and 1 separate while a collapse towards 0 stays on the axis. Draws
    the nominal line, a dotted line at the knee and (with ``replications``) the band of +-
    :data:`SE_MULT` binomial standard errors around the nominal level, and labels the axis with
    its two pieces (:func:`coverage_axis_label`)."""
    low = knee / factor

    def forward(y):
        y = np.asarray(y, np.float64)
        return np.where(y < knee, y / factor, low + (y - knee))

    def inverse(v):
        v = np.asarray(v, np.float64)
        return np.where(v < low, v * factor, knee + (v - low))

    ax.set_yscale("function", functions=(forward, inverse))
    ax.set_ylim(-0.02, 1.015)
    upper = [t for t in (0.85, 0.9, 0.95, 1.0) if t > knee]
    ax.set_yticks([0.0, knee / 2, knee, *upper])
    ax.axhline(knee, color="0.55", linewidth=0.6, linestyle=":")
    if replications > 0:
        half = SE_MULT * np.sqrt(level * (1 - level) / replications)
        ax.axhspan(level - half, min(level + half, 1.0), color="0.5", alpha=0.12, linewidth=0,
                   label=f"nominal +-{SE_MULT:g} binomial SE ({replications} replications)")
    ax.axhline(level, color="black", linewidth=0.8, linestyle="--", label=f"nominal {level:.0%}")
    ax.set_ylabel(coverage_axis_label(level, knee=knee, factor=factor))


def coverage_axis_label(level: float, *, knee: float = 0.8, factor: float = 8.0) -> str:
    """The y label of :func:`coverage_axis`: what it shows and where it changes scale.

    >>> print(coverage_axis_label(0.95))
    coverage of the 95% CI
    (axis 8x compressed below 0.8)
    """
    return f"coverage of the {level:.0%} CI\n(axis {factor:g}x compressed below {knee:g})"


def coverage_axis_note(*, knee: float = 0.8, factor: float = 8.0) -> str:
    """The caption sentence that explains :func:`coverage_axis`."""
    return (f"The coverage axis is linear in two pieces: below {knee:g} (dotted line) it is "
            f"compressed {factor:g}x, so that the curves near the nominal level separate.")


def fit_ylim(ax, values: Sequence[Any], *, log: bool = False, pad: float = 0.08) -> None:
    """Set the y limits to contain every finite value in ``values`` (plus padding)."""
    arr = np.concatenate([np.ravel(np.asarray(v, np.float64)) for v in values])
    arr = arr[np.isfinite(arr)]
    if log:
        arr = arr[arr > 0]
    if arr.size == 0:
        return
    lo, hi = float(arr.min()), float(arr.max())
    if log:
        ax.set_ylim(lo / (1 + 3 * pad), hi * (1 + 3 * pad))
    else:
        span = (hi - lo) or max(abs(hi), 1.0)
        ax.set_ylim(lo - pad * span, hi + pad * span)


__all__ = [
    "LINESTYLES",
    "MARKERS",
    "MIN_FONT",
    "PALETTE",
    "SE_MULT",
    "caption",
    "coverage_axis",
    "coverage_axis_label",
    "coverage_axis_note",
    "figure",
    "figure_legend",
    "fit_ylim",
    "legend",
    "mean_band",
    "mean_bars",
    "paper_markers",
    "se_note",
]
