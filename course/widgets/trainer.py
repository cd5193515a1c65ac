"""One Playground run: the data, the student's model and optimizer, and training epoch by epoch.

No widgets here, so the logic is tested (and usable) without a notebook.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from course.datasets import make_2d, train_test_split
from course.plots.curves import HISTORY_KEYS, new_history
from course.probe import call, dead_share, evaluation_mode, trace_layers
from course.widgets.config import Config
from course.widgets.framework import Framework


class TrainingError(RuntimeError):
    """Training cannot go on: a NaN loss or a wrongly shaped output, with advice."""


class LayerStats(NamedTuple):
    """Per layer after an epoch: the norm of its parameter gradient on the whole
    training set (``None`` without parameters) and, after a ReLU, the share of dead units."""

    name: str
    grad_norm: float | None
    dead_share: float | None


class Trainer:
    """Trains a model that ``framework`` builds for ``config`` on a 2-D dataset.

    After ``reset()`` (called on construction) the model is untrained and the
    history empty; each ``step()`` trains one epoch and appends the train and test
    loss and accuracy (measured in eval mode) to ``history``.
    """

    def __init__(self, framework: Framework, config: Config) -> None:
        self.framework, self.config = framework, config
        self.reset()

    def reset(self) -> None:
        cfg = self.config
        X, y = make_2d(cfg.dataset, cfg.n_points, cfg.noise, cfg.seed)
        self.X_train, self.X_test, self.y_train, self.y_test = train_test_split(
            X, y, test_size=cfg.test_ratio, seed=cfg.seed)
        self.n_classes = int(y.max()) + 1
        self.framework.seed(cfg.seed)
        self.model = self.framework.build_model(cfg, X.shape[1], self.n_classes)
        self.optimizer = self.framework.build_optimizer(self.model.parameters(), cfg)
        self.loss = self.framework.CrossEntropyLoss()
        self.rng = np.random.default_rng(cfg.seed)
        self.history, self.epoch = new_history(), 0
        self.layers = self._layer_stats()[1]

    def step(self) -> None:
        """Train one epoch (a pass over the shuffled training set), then evaluate."""
        self.model.train()
        for xb, yb in self.framework.batches(self.X_train, self.y_train, self.config.batch_size, self.rng):
            loss = self.loss(self._checked_output(xb), yb)
            self._check_finite(loss)
            self.optimizer.zero_grad()
            self.model.backward(self.loss.backward())
            self.optimizer.step()
        self.epoch += 1
        self._evaluate()

    def _checked_output(self, xb: np.ndarray) -> np.ndarray:
        out = call(self.model, xb)
        if out.shape != (len(xb), self.n_classes):
            raise TrainingError(
                f"the model returned shape {out.shape} for a batch of shape {xb.shape}; "
                f"expected ({len(xb)}, {self.n_classes}), one logit per class"
            )
        return out

    def _check_finite(self, loss: float) -> None:
        if not math.isfinite(loss):
            raise TrainingError(
                f"the loss became {loss} in epoch {self.epoch + 1}: lower the learning rate, "
                "or check the loss for log(0) or an overflowing exp"
            )

    def _layer_stats(self) -> tuple[tuple[float, float], list[LayerStats]]:
        """Train loss and accuracy, and per-layer statistics, from one pass over the training set."""
        with evaluation_mode(self.model):
            self._checked_output(self.X_train)  # before a loss fails on the shape with a vaguer message
        loss, traces = trace_layers(self.model, self.X_train, self.y_train, self.framework.CrossEntropyLoss())
        accuracy = float(np.mean(traces[-1].output.argmax(axis=1) == self.y_train))
        stats = [
            LayerStats(t.name, t.grad_norm, dead_share(t.output) if t.kind == "ReLU" else None)
            for t in traces
        ]
        return (loss, accuracy), stats

    def _evaluate(self) -> None:
        (train_loss, train_acc), self.layers = self._layer_stats()
        with evaluation_mode(self.model):
            out = call(self.model, self.X_test)
        test_loss = float(self.framework.CrossEntropyLoss()(out, self.y_test))
        test_acc = float(np.mean(out.argmax(axis=1) == self.y_test))
        self._check_finite(train_loss)
        for key, value in zip(HISTORY_KEYS, (train_loss, test_loss, train_acc, test_acc)):
            self.history[key].append(value)
