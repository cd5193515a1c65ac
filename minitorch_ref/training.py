"""``fit``, ``evaluate`` and ``predict``: the standard training loop, packaged.

``fit`` runs the seven steps of every epoch (forward, loss, zero_grad, backward
through the loss, backward through the model, optimizer step; scheduler step
per epoch), evaluates on a validation loader, shows a progress line and
returns the history ``{'train_loss', 'train_acc', 'test_loss', 'test_acc'}``
that ``course.plots.plot_loss_curves`` and the Playground read.
"""
from __future__ import annotations

import sys
import time
from typing import Iterable

import numpy as np

from minitorch_ref.nn.loss import Loss
from minitorch_ref.nn.module import Module
from minitorch_ref.optim.lr_scheduler import LRScheduler
from minitorch_ref.optim.optimizer import Optimizer


def _correct(pred: np.ndarray, target: np.ndarray) -> float | None:
    """Correct predictions in a batch, for class-index targets; None for regression."""
    if not np.issubdtype(np.asarray(target).dtype, np.integer):
        return None
    return float(np.sum(pred.argmax(axis=1) == target)) if pred.ndim == 2 else None


class _Meter:
    """Running mean loss and accuracy (accuracy while targets are class indices)."""

    def __init__(self) -> None:
        self.total, self.count, self.correct = 0.0, 0, 0.0

    def add(self, loss: float, pred: np.ndarray, target: np.ndarray) -> None:
        self.total += loss * len(target)
        self.count += len(target)
        hits = _correct(pred, target)
        self.correct = None if hits is None or self.correct is None else self.correct + hits

    def result(self) -> tuple[float, float | None]:
        if self.count == 0:
            raise ValueError("the loader yielded no batch")
        return self.total / self.count, None if self.correct is None else self.correct / self.count


def _add_epoch(history: dict[str, list[float]], prefix: str, loss: float, acc: float | None):
    history.setdefault(f"{prefix}_loss", []).append(loss)
    if acc is not None:
        history.setdefault(f"{prefix}_acc", []).append(acc)


def train_epoch(model: Module, loss_fn: Loss, optimizer: Optimizer,
                loader: Iterable) -> tuple[float, float | None]:
    """One pass over ``loader`` in training mode; the mean loss and accuracy."""
    model.train()
    meter = _Meter()
    for x, y in loader:
        pred = model(x)
        loss = loss_fn(pred, y)
        optimizer.zero_grad()
        model.backward(loss_fn.backward())
        optimizer.step()
        meter.add(loss, pred, y)
    return meter.result()


def evaluate(model: Module, loss_fn: Loss, loader: Iterable) -> tuple[float, float | None]:
    """Mean loss and accuracy over ``loader`` in eval mode (the mode is restored)."""
    was_training = model.training
    model.eval()
    meter = _Meter()
    for x, y in loader:
        pred = model(x)
        meter.add(loss_fn(pred, y), pred, y)
    model.train(was_training)
    return meter.result()


def predict(model: Module, X: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """The model's outputs for ``X`` in eval mode, computed in batches.

    Shape:
        - X: ``(N, *)``; returns ``(N, *output)``.
    """
    was_training = model.training
    model.eval()
    outputs = [model(X[i:i + batch_size]) for i in range(0, len(X), batch_size)]
    model.train(was_training)
    return np.concatenate(outputs)


def fit(model: Module, loss_fn: Loss, optimizer: Optimizer, train_loader: Iterable,
        epochs: int, val_loader: Iterable | None = None, scheduler: LRScheduler | None = None,
        progress: bool = True) -> dict[str, list[float]]:
    """Train for ``epochs`` epochs; the per-epoch history of losses and accuracies."""
    if epochs < 1:
        raise ValueError(f"fit needs epochs >= 1, got {epochs}")
    history: dict[str, list[float]] = {}
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        _add_epoch(history, "train", *train_epoch(model, loss_fn, optimizer, train_loader))
        if val_loader is not None:
            _add_epoch(history, "test", *evaluate(model, loss_fn, val_loader))
        if scheduler is not None:
            scheduler.step()
        if progress:
            _show_progress(epoch, epochs, history, time.perf_counter() - start)
    if progress:
        sys.stdout.write("\n")
    return history


def _show_progress(epoch: int, epochs: int, history: dict[str, list[float]], seconds: float):
    done = int(20 * epoch / epochs)
    latest = "  ".join(f"{key} {values[-1]:.4f}" for key, values in history.items())
    sys.stdout.write(f"\r[{'#' * done}{'.' * (20 - done)}] epoch {epoch}/{epochs}  "
                     f"{latest}  {seconds:.1f}s")
    sys.stdout.flush()
