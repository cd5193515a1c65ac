"""Decision regions of a 2-D classifier, with its training and test points."""
from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from course.plots import style
from course.probe import call, evaluation_mode


def predict_classes(model: Any, X: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    """Predicted classes ``(N,)`` from a model's output on ``X`` ``(N, D)``.

    Logits ``(N, C)`` with ``C >= 2`` give the argmax; one score per sample,
    ``(N, 1)`` or ``(N,)``, gives class 1 where the score exceeds ``threshold``
    (0 for a logit, 0.5 for a probability after a Sigmoid).
    """
    out = call(model, X)
    if out.ndim == 2 and out.shape[0] == len(X):
        return out.argmax(axis=1) if out.shape[1] > 1 else (out[:, 0] > threshold).astype(int)
    if out.shape == (len(X),):
        return (out > threshold).astype(int)
    raise ValueError(
        f"the model returned shape {out.shape} for input {X.shape}; expected logits "
        f"({len(X)}, n_classes) or one score per sample ({len(X)}, 1)"
    )


def _grid(points: np.ndarray, resolution: int, padding: float) -> tuple[np.ndarray, list[float]]:
    """A ``(resolution**2, 2)`` grid covering ``points`` with a margin, and its extent."""
    low, high = points.min(axis=0) - padding, points.max(axis=0) + padding
    xs, ys = np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    return grid, [low[0], high[0], low[1], high[1]]


def _check_points(name: str, X: np.ndarray, y: np.ndarray) -> None:
    if X.ndim != 2 or X.shape[1] != 2 or y.shape != (len(X),):
        raise ValueError(
            f"{name} needs 2-D points of shape (N, 2) and labels of shape (N,), "
            f"got {X.shape} and {y.shape}"
        )


def plot_decision_boundary(model: Any, X: np.ndarray, y: np.ndarray, ax: Axes | None = None, *,
                           X_test: np.ndarray | None = None, y_test: np.ndarray | None = None,
                           resolution: int = 150, padding: float = 0.3,
                           threshold: float = 0.0) -> Axes:
    """Colour the plane by the class ``model`` predicts, and draw the points on top.

    The model runs in eval mode (if it has ``eval``) and goes back to its previous
    mode afterwards, so Dropout does not blur the picture and training can go on.

    Args:
        model: anything with ``forward`` or ``__call__``, mapping ``(N, 2)`` to logits
            ``(N, C)`` or one score per sample ``(N, 1)`` (see ``predict_classes``).
        X, y: training points ``(N, 2)`` and integer labels ``(N,)``, drawn as dots.
        ax: the Axes to draw on (default: a new figure).
        X_test, y_test: optional test points, drawn as triangles.
        resolution: grid points per side.
        padding: margin around the points.
        threshold: decision threshold for single-score outputs.

    Returns:
        The Axes.
    """
    X, y = np.asarray(X), np.asarray(y)
    _check_points("plot_decision_boundary", X, y)
    sets = [(X, y, "o", "train")]
    if X_test is not None and y_test is not None:
        X_test, y_test = np.asarray(X_test), np.asarray(y_test)
        _check_points("plot_decision_boundary (test set)", X_test, y_test)
        sets.append((X_test, y_test, "^", "test"))
    grid, extent = _grid(np.concatenate([s[0] for s in sets]), resolution, padding)
    with evaluation_mode(model):
        regions = predict_classes(model, grid, threshold).reshape(resolution, resolution)
    n_classes = int(max(regions.max(), *(s[1].max() for s in sets))) + 1
    ax = style.axes_or_new(ax)
    ax.imshow(regions, origin="lower", extent=extent, cmap=style.class_cmap(n_classes),
              vmin=-0.5, vmax=n_classes - 0.5, alpha=0.35, interpolation="nearest", aspect="auto")
    colors = np.array(style.class_colors(n_classes))
    markers = [ax.scatter(points[:, 0], points[:, 1], c=colors[labels], marker=marker, s=22,
                          edgecolors="black" if name == "test" else "white", linewidths=0.6,
                          label=name) for points, labels, marker, name in sets]
    ax.set(xlim=extent[:2], ylim=extent[2:], xlabel="$x_1$", ylabel="$x_2$")
    ax.grid(False)
    _legend(ax, markers if len(sets) > 1 else [], colors)
    return ax


def _legend(ax: Axes, markers: list, colors: np.ndarray) -> None:
    """Which colour is which class, and (with a test set) which marker is which set."""
    classes = [Patch(facecolor=color, label=f"class {k}") for k, color in enumerate(colors)]
    legend = ax.legend(handles=markers + classes, loc="upper right", fontsize="small")
    for handle in legend.legend_handles[:len(markers)]:
        handle.set_facecolor("lightgrey")  # the marker, not one class's colour
