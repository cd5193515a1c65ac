"""The student's classes, and how the Playground builds a model, an optimizer and batches from them.

Nothing here implements a layer, a loss or an optimizer: every one comes from the
notebook, so the Playground trains the student's own framework.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator

import numpy as np

from course.widgets.config import Config

ACTIVATIONS = ("ReLU", "LeakyReLU", "Tanh", "Sigmoid", "GELU")
OPTIMIZERS = {  # menu entry -> (class name, extra keyword arguments)
    "SGD": ("SGD", {}),
    "SGD + momentum": ("SGD", {"momentum": 0.9}),
    "Adam": ("Adam", {}),
}


@dataclasses.dataclass
class Framework:
    """The classes a Playground trains with, passed by name (e.g. ``Linear=Linear``).

    ``CrossEntropyLoss`` and at least one of ``SGD``/``Adam`` are always needed.
    The model is either ``Sequential`` of ``Linear``, an activation and (if the
    dropout control is above 0) ``Dropout``, or whatever
    ``model_factory(config, n_inputs, n_classes)`` returns. Batches come from
    ``DataLoader(TensorDataset(X, y), batch_size, shuffle=True)`` when both are
    given, else from a shuffled index. ``manual_seed(seed)`` makes runs
    reproducible; without it, numpy's global generator is seeded.
    """

    CrossEntropyLoss: type
    Linear: type | None = None
    Sequential: type | None = None
    ReLU: type | None = None
    LeakyReLU: type | None = None
    Tanh: type | None = None
    Sigmoid: type | None = None
    GELU: type | None = None
    Dropout: type | None = None
    SGD: type | None = None
    Adam: type | None = None
    DataLoader: type | None = None
    TensorDataset: type | None = None
    model_factory: Callable[[Config, int, int], Any] | None = None
    manual_seed: Callable[[int], Any] | None = None

    def __post_init__(self) -> None:
        if self.model_factory is None and not (self.Linear and self.Sequential and self.activations):
            raise ValueError("Playground needs Linear=, Sequential= and an activation such as "
                             "ReLU=, or a model_factory=")
        if not self.optimizers:
            raise ValueError("Playground needs an optimizer class: SGD= or Adam=")
        if (self.DataLoader is None) != (self.TensorDataset is None):
            raise ValueError("pass DataLoader= and TensorDataset= together (or neither)")

    @property
    def activations(self) -> list[str]:
        return [name for name in ACTIVATIONS if getattr(self, name) is not None]

    @property
    def optimizers(self) -> list[str]:
        return [entry for entry, (name, _) in OPTIMIZERS.items() if getattr(self, name) is not None]

    def seed(self, seed: int) -> None:
        if self.manual_seed is not None:
            self.manual_seed(seed)
        else:
            np.random.seed(seed)

    def build_model(self, config: Config, n_inputs: int, n_classes: int) -> Any:
        """A network from ``n_inputs`` features to ``n_classes`` logits."""
        if self.model_factory is not None:
            return self.model_factory(config, n_inputs, n_classes)
        if config.dropout > 0 and self.Dropout is None:
            raise ValueError("dropout > 0 needs the Dropout class: Playground(..., Dropout=Dropout)")
        layers, width = [], n_inputs
        for hidden in config.hidden:
            layers += [self.Linear(width, hidden), getattr(self, config.activation)()]
            if config.dropout > 0:
                layers.append(self.Dropout(config.dropout))
            width = hidden
        return self.Sequential(*layers, self.Linear(width, n_classes))

    def build_optimizer(self, parameters: list, config: Config) -> Any:
        name, kwargs = OPTIMIZERS[config.optimizer]
        if config.weight_decay > 0:  # only then, so an optimizer without weight decay still works
            kwargs = {**kwargs, "weight_decay": config.weight_decay}
        return getattr(self, name)(parameters, lr=config.lr, **kwargs)

    def batches(self, X: np.ndarray, y: np.ndarray, batch_size: int,
                rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """One epoch of shuffled mini-batches ``(X_batch (B, D), y_batch (B,))``."""
        if self.DataLoader is not None:
            yield from self.DataLoader(self.TensorDataset(X, y), batch_size=batch_size, shuffle=True)
            return
        order = rng.permutation(len(X))
        for start in range(0, len(X), batch_size):
            index = order[start:start + batch_size]
            yield X[index], y[index]
