"""The course's one plotting style: the Okabe-Ito palette, safe for colour-blind readers."""
from __future__ import annotations

from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

OKABE_ITO = (
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)
"""Okabe & Ito (2008): eight colours that stay distinct under every common colour blindness."""

TRAIN_COLOR, TEST_COLOR = OKABE_ITO[4], OKABE_ITO[5]
"""Train curves are blue, test curves vermillion, in every plot."""

SEQUENTIAL_CMAP = "cividis"
"""Colour map for magnitudes (confusion matrices, loss surfaces): readable by everyone."""

RC = {
    "axes.prop_cycle": cycler(color=OKABE_ITO),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "image.cmap": SEQUENTIAL_CMAP,
    "legend.frameon": False,
}


def class_colors(n_classes: int) -> list[str]:
    """One palette colour per class (the palette repeats after 8 classes)."""
    return [OKABE_ITO[k % len(OKABE_ITO)] for k in range(n_classes)]


def class_cmap(n_classes: int) -> ListedColormap:
    """A discrete colour map whose colour ``k`` is class ``k``'s."""
    return ListedColormap(class_colors(n_classes))


def subplots(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (5, 4),
             managed: bool = True, layout: str | None = "constrained",
             **kwargs: Any) -> tuple[Figure, np.ndarray]:
    """A figure with a ``(nrows, ncols)`` array of Axes, in the course style.

    ``managed=True`` goes through pyplot, so the figure shows in a notebook like
    any other; ``managed=False`` makes a figure pyplot does not know (a widget
    renders it to an image itself, and nothing shows twice or leaks).
    ``layout=None`` skips the constrained layout (a third of the drawing time),
    for figures redrawn many times with fixed margins.
    """
    with mpl.rc_context(RC):
        if managed:
            return plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout=layout, **kwargs)
        fig = Figure(figsize=figsize, layout=layout)
        return fig, fig.subplots(nrows, ncols, squeeze=False, **kwargs)


def axes_or_new(ax: Axes | None, figsize: tuple[float, float] = (5, 4)) -> Axes:
    """``ax`` itself, or the single Axes of a new styled figure."""
    return ax if ax is not None else subplots(figsize=figsize)[1][0, 0]
