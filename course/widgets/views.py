"""The Playground's three pictures, each rendered to PNG bytes for an ``ipywidgets.Image``."""
from __future__ import annotations

import io

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from course.plots import plot_decision_boundary, plot_loss_curves, style
from course.widgets.trainer import LayerStats, Trainer

DPI = 72


def _figure(ncols: int, figsize: tuple[float, float], **margins: float) -> tuple[Figure, np.ndarray]:
    """An unmanaged figure with fixed margins: no layout engine, as it is redrawn every few epochs."""
    fig, axes = style.subplots(1, ncols, figsize=figsize, managed=False, layout=None)
    fig.subplots_adjust(**margins)
    return fig, axes[0]


def to_png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def boundary_png(trainer: Trainer) -> bytes:
    """Decision regions with the train (dots) and test (triangles) points."""
    fig, axes = _figure(1, (4.2, 4.2), left=0.19, right=0.97, bottom=0.12, top=0.93)
    plot_decision_boundary(trainer.model, trainer.X_train, trainer.y_train, axes[0],
                           X_test=trainer.X_test, y_test=trainer.y_test, resolution=90)
    axes[0].set_title(f"epoch {trainer.epoch}")
    return to_png(fig)


def curves_png(trainer: Trainer) -> bytes:
    """Train and test loss and accuracy per epoch (a note before the first epoch)."""
    fig, axes = _figure(2, (6.6, 2.6), left=0.1, right=0.98, bottom=0.18, top=0.95, wspace=0.3)
    if trainer.epoch:
        plot_loss_curves(trainer.history, axes=axes)
    else:
        for ax, label in zip(axes, ("loss", "accuracy")):
            ax.text(0.5, 0.5, "press Step or Play", ha="center", va="center", transform=ax.transAxes)
            ax.set(xlabel="epoch", ylabel=label)
    return to_png(fig)


def _bars(ax: Axes, names: list[str], values: list[float], color: str, title: str) -> None:
    ax.barh(np.arange(len(values)), values, color=color)
    ax.set_yticks(np.arange(len(values)), names, fontsize="small")
    ax.invert_yaxis()  # first layer on top
    ax.set_title(title, fontsize="medium")
    if not values:
        ax.text(0.5, 0.5, "no such layer", ha="center", va="center", transform=ax.transAxes)


def layers_png(layers: list[LayerStats]) -> bytes:
    """Per layer: the gradient norm (layers with parameters) and the share of dead ReLUs."""
    fig, axes = _figure(2, (6.6, 2.6), left=0.15, right=0.98, bottom=0.12, top=0.88, wspace=0.45)
    with_params = [s for s in layers if s.grad_norm is not None]
    relus = [s for s in layers if s.dead_share is not None]
    _bars(axes[0], [s.name for s in with_params], [s.grad_norm for s in with_params],
          style.OKABE_ITO[2], "gradient norm $\\|\\partial L/\\partial W\\|$")
    _bars(axes[1], [s.name for s in relus], [s.dead_share for s in relus],
          style.OKABE_ITO[5], "share of dead ReLUs")
    axes[1].set_xlim(0, 1)
    return to_png(fig)
