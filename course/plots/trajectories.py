"""Optimizer paths drawn over the contour lines of a 2-D loss surface."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from matplotlib.axes import Axes

from course.plots import style


def _bounds(paths: Sequence[np.ndarray], padding: float = 0.15) -> tuple[float, float, float, float]:
    """A box around every path, widened by ``padding`` of its size on each side."""
    points = np.concatenate(paths)
    low, high = points.min(axis=0), points.max(axis=0)
    margin = padding * np.maximum(high - low, 1e-3)
    return low[0] - margin[0], high[0] + margin[0], low[1] - margin[1], high[1] + margin[1]


def plot_optimizer_trajectories(paths: Sequence[tuple[str, np.ndarray]],
                                f: Callable[[np.ndarray, np.ndarray], np.ndarray],
                                ax: Axes | None = None,
                                bounds: tuple[float, float, float, float] | None = None,
                                resolution: int = 200, levels: int = 30) -> Axes:
    """Where each optimizer went on the surface ``f(x, y)``: a square marks its start, a star its end.

    Args:
        paths: ``[(name, points)]`` with ``points`` of shape ``(T, 2)``: the
            parameters ``(x, y)`` after each of ``T - 1`` steps, the start first.
        f: the loss surface, applied elementwise to two arrays of the same shape
            (write it with numpy operations, e.g. ``lambda x, y: x**2 + 10 * y**2``).
        ax: the Axes to draw on (default: a new figure).
        bounds: ``(xmin, xmax, ymin, ymax)``; default: a box around all paths.
        resolution: grid points per side for the contours.
        levels: number of contour levels.

    Returns:
        The Axes.
    """
    if not paths:
        raise ValueError("paths is empty: pass [(name, points of shape (T, 2)), ...]")
    arrays = [np.asarray(points, dtype=float) for _, points in paths]
    for (name, _), points in zip(paths, arrays):
        if points.ndim != 2 or points.shape[1] != 2 or len(points) == 0:
            raise ValueError(f"path {name!r} must have shape (T, 2) with T >= 1, got {points.shape}")
    xmin, xmax, ymin, ymax = bounds if bounds is not None else _bounds(arrays)
    xx, yy = np.meshgrid(np.linspace(xmin, xmax, resolution), np.linspace(ymin, ymax, resolution))
    ax = style.axes_or_new(ax, figsize=(6, 5))
    ax.contour(xx, yy, np.broadcast_to(f(xx, yy), xx.shape), levels=levels,
               cmap=style.SEQUENTIAL_CMAP, linewidths=0.7)
    for (name, _), points, color in zip(paths, arrays, style.class_colors(len(arrays))):
        ax.plot(points[:, 0], points[:, 1], "-o", color=color, markersize=2.5, linewidth=1.4, label=name)
        ax.plot(*points[0], "s", color=color, markersize=7, markeredgecolor="black")
        ax.plot(*points[-1], "*", color=color, markersize=13, markeredgecolor="black")
    ax.set(xlim=(xmin, xmax), ylim=(ymin, ymax), xlabel="$x$", ylabel="$y$")
    ax.grid(False)
    ax.legend()
    return ax
