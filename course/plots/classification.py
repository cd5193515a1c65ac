"""How a classifier errs: a confusion matrix drawn, and a grid of the images it got wrong."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from matplotlib.axes import Axes

from course.plots import style


def _check_labels(y_true: np.ndarray, y_pred: np.ndarray) -> None:
    if y_true.ndim != 1 or y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred need the same shape (N,), got {y_true.shape} and {y_pred.shape}")
    if not (np.issubdtype(y_true.dtype, np.integer) and np.issubdtype(y_pred.dtype, np.integer)):
        raise ValueError("y_true and y_pred must hold integer class labels; "
                         "turn logits into labels with logits.argmax(axis=1)")


def plot_confusion_matrix(counts: np.ndarray, ax: Axes | None = None,
                          class_names: Sequence[str] | None = None,
                          normalize: bool = False) -> Axes:
    """Draw a confusion matrix; the diagonal holds the correct predictions.

    The counting is yours (unit 11's ``confusion_matrix``): this only draws.

    Args:
        counts: shape ``(C, C)``; row ``i``, column ``j`` counts samples of true
            class ``i`` predicted as ``j``.
        ax: the Axes to draw on (default: a new figure).
        class_names: ``C`` tick labels (default: ``0 .. C-1``).
        normalize: show each row as fractions of that true class.

    Returns:
        The Axes.
    """
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or (counts < 0).any():
        raise ValueError(f"counts must be a square (C, C) matrix of non-negative counts, got "
                         f"shape {counts.shape}; make it with confusion_matrix(y_true, y_pred)")
    n_classes = len(counts)
    if class_names is not None and len(class_names) != n_classes:
        raise ValueError(f"{len(class_names)} class names for a {n_classes}x{n_classes} matrix")
    shown = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1) if normalize else counts
    ax = style.axes_or_new(ax, figsize=(0.55 * n_classes + 2.5, 0.55 * n_classes + 2))
    image = ax.imshow(shown, cmap=style.SEQUENTIAL_CMAP)
    ax.figure.colorbar(image, ax=ax, shrink=0.8)
    for (i, j), value in np.ndenumerate(shown):
        text = f"{value:.2f}" if normalize else f"{int(value)}"
        ax.text(j, i, text, ha="center", va="center", fontsize="small",
                color="black" if value > 0.6 * shown.max() else "white")
    ticks = np.arange(n_classes)
    names = class_names if class_names is not None else [str(k) for k in ticks]
    ax.set(xticks=ticks, yticks=ticks, xticklabels=names, yticklabels=names,
           xlabel="predicted class", ylabel="true class")
    ax.grid(False)
    return ax


def plot_misclassified(X: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray,
                       max_images: int = 24, ncols: int = 8) -> np.ndarray:
    """The first ``max_images`` misclassified images, titled ``true -> predicted``.

    Args:
        X: flattened square images ``(N, side * side)`` (or ``(N, side, side)``).
        y_true, y_pred: integer labels of shape ``(N,)``.
        max_images: how many to show at most.
        ncols: images per row.

    Returns:
        The Axes, shape ``(rows, ncols)``; one Axes with a note if nothing is wrong.
    """
    X, y_true, y_pred = np.asarray(X), np.asarray(y_true), np.asarray(y_pred)
    _check_labels(y_true, y_pred)
    pixels = int(np.prod(X.shape[1:]))
    side = math.isqrt(pixels)
    if X.ndim < 2 or len(X) != len(y_true) or side * side != pixels:
        raise ValueError(f"X must hold N = {len(y_true)} square images, got shape {X.shape}")
    wrong = np.flatnonzero(y_true != y_pred)[:max_images]
    if not len(wrong):
        ax = style.axes_or_new(None, figsize=(4, 1))
        ax.text(0.5, 0.5, "no misclassified samples", ha="center", va="center")
        ax.set_axis_off()
        return np.array([[ax]])
    rows = -(-len(wrong) // ncols)
    _, axes = style.subplots(rows, ncols, figsize=(1.2 * ncols, 1.45 * rows))
    for ax in axes.flat:
        ax.set_axis_off()
    for ax, i in zip(axes.flat, wrong):
        ax.imshow(X[i].reshape(side, side), cmap="gray_r")
        ax.set_title(f"{y_true[i]} \u2192 {y_pred[i]}", fontsize="small", color=style.OKABE_ITO[5])
    return axes
