"""Per-layer histograms of activations and gradients, to see saturation and vanishing gradients."""
from __future__ import annotations

from typing import Any

import numpy as np

from course.plots import style
from course.probe import trace_layers


def plot_layer_histograms(model: Any, X: np.ndarray, y: np.ndarray, loss: Any,
                          bins: int = 40) -> np.ndarray:
    """Histograms of every layer's outputs (top row) and of ``dL/d output`` (bottom row).

    One forward and one backward pass over ``X`` in eval mode; the model's mode and
    parameter gradients are left as they were, so this can run in the middle of training.

    Args:
        model: a Sequential-like model (iterating over it gives its layers).
        X: inputs ``(N, in_features)``.
        y: targets, as ``loss`` expects them.
        loss: a loss object (``loss(pred, y)``, ``loss.backward()``).
        bins: histogram bins.

    Returns:
        Axes of shape ``(2, n_layers)``.
    """
    _, traces = trace_layers(model, np.asarray(X), np.asarray(y), loss)
    fig, axes = style.subplots(2, len(traces), figsize=(2.4 * len(traces), 4.4))
    for column, trace in zip(axes.T, traces):
        column[0].hist(trace.output.ravel(), bins=bins, color=style.TRAIN_COLOR)
        column[1].hist(trace.grad_output.ravel(), bins=bins, color=style.OKABE_ITO[2])
        column[0].set_title(trace.name, fontsize="medium")
        for ax in column:
            ax.set_yticks([])
            ax.tick_params(labelsize="x-small")
    axes[0, 0].set_ylabel("activations")
    axes[1, 0].set_ylabel("gradients\n$\\partial L / \\partial$ output")
    return axes
