"""Matplotlib helpers for experiment figures (object API only: no pyplot, no display needed)."""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

PALETTE = ("#1b6ca8", "#d1495b", "#edae49", "#00798c", "#66a182", "#8d96a3", "#2e4057", "#b07aa1")


def figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3, **kw: Any):
    """A ``Figure`` and its axes grid (``squeeze=False``: always 2-d), with a clean style."""
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    for ax in axes.ravel():
        ax.grid(True, alpha=0.3, linewidth=0.6)
        ax.set_prop_cycle(color=PALETTE)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, axes


__all__ = ["PALETTE", "figure"]
