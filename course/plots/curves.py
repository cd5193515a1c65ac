"""Learning curves: loss and accuracy per epoch, on the training and the test set.

The history format used throughout the course is a dict of lists, one entry per
epoch, with any of the keys ``'train_loss'``, ``'test_loss'``, ``'train_acc'``,
``'test_acc'``:

    history = {"train_loss": [], "test_loss": [], "train_acc": [], "test_acc": []}
    for epoch in range(epochs):
        ...
        history["train_loss"].append(train_loss)
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from course.plots import style

HISTORY_KEYS = ("train_loss", "test_loss", "train_acc", "test_acc")
PANELS = (("loss", "loss"), ("acc", "accuracy"))


def new_history() -> dict[str, list[float]]:
    """An empty history with every key of the course's format."""
    return {key: [] for key in HISTORY_KEYS}


def _check_history(history: Mapping[str, Sequence[float]]) -> list[str]:
    """The metrics (``'loss'``, ``'acc'``) that ``history`` has values for."""
    unknown = set(history) - set(HISTORY_KEYS)
    if unknown:
        raise ValueError(
            f"unknown history key(s) {sorted(unknown)}; use {', '.join(HISTORY_KEYS)}"
        )
    metrics = [m for m, _ in PANELS if any(len(history.get(f"{s}_{m}", ())) for s in ("train", "test"))]
    if not metrics:
        raise ValueError("the history is empty: append one value per epoch to e.g. history['train_loss']")
    return metrics


def plot_loss_curves(history: Mapping[str, Sequence[float]],
                     axes: Sequence[Axes] | None = None) -> np.ndarray:
    """Loss (and accuracy, if recorded) per epoch, train in blue and test in vermillion.

    Args:
        history: dict of per-epoch lists (see the module docstring); the lists of
            one metric may differ in length (e.g. test evaluated less often).
        axes: one Axes per metric present (default: a new figure).

    Returns:
        The array of Axes, loss first.
    """
    metrics = _check_history(history)
    if axes is None:
        axes = style.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.5))[1][0]
    if len(axes) != len(metrics):
        raise ValueError(f"the history has {len(metrics)} metric(s), {metrics}, but got {len(axes)} Axes")
    labels = dict(PANELS)
    for ax, metric in zip(axes, metrics):
        for split, color in (("train", style.TRAIN_COLOR), ("test", style.TEST_COLOR)):
            values = history.get(f"{split}_{metric}", ())
            if len(values):
                ax.plot(np.arange(1, len(values) + 1), values, color=color, label=split)
        ax.set(xlabel="epoch", ylabel=labels[metric])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend()
    losses = [v for key in ("train_loss", "test_loss") for v in history.get(key, ())]
    if losses and min(losses) > 0:
        axes[0].set_yscale("log")  # late progress stays visible next to the first epochs
    return np.asarray(axes)
