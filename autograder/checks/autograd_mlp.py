"""Check of the bonus unit's ``Tensor`` on whole MLPs: its gradients against the manual
backward passes of ``minitorch_ref.nn`` (units 3-5)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.checks._calls import type_of
from autograder.checks._tensor_cases import Case, Expected, check_case
from autograder.registry import check
from course.testing._trusted import asarray
import minitorch_ref
from minitorch_ref import nn as manual
from minitorch_ref.autograd import Tensor as ReferenceTensor


@dataclass(frozen=True)
class MLP:
    """A small MLP of ``minitorch_ref.nn`` layers and its loss, to rebuild with Tensors."""

    sizes: tuple[int, ...]
    hidden: str             # "relu" or "tanh"
    sigmoid_output: bool
    loss: str               # "cross-entropy" or "MSE"
    batch: int
    seed: int

    def manual(self) -> tuple[manual.Sequential, object]:
        """The network of the earlier units (same seed, same weights) and its criterion."""
        minitorch_ref.manual_seed(self.seed)
        layers: list = []
        for i, (n_in, n_out) in enumerate(zip(self.sizes, self.sizes[1:])):
            layers.append(manual.Linear(n_in, n_out))
            if i < len(self.sizes) - 2:
                layers.append(manual.ReLU() if self.hidden == "relu" else manual.Tanh())
        if self.sigmoid_output:
            layers.append(manual.Sigmoid())
        criterion = manual.CrossEntropyLoss() if self.loss == "cross-entropy" else manual.MSELoss()
        return manual.Sequential(*layers), criterion

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed + 1)
        X = rng.standard_normal((self.batch, self.sizes[0]))
        if self.loss == "cross-entropy":
            return X, rng.integers(0, self.sizes[-1], self.batch)
        return X, rng.uniform(0, 1, (self.batch, self.sizes[-1]))


def cross_entropy_ops(logits, y: np.ndarray):
    """Mean softmax cross-entropy of ``logits`` (a Tensor, (N, C)) for classes ``y`` (N,):
    Tensor operations only, shifted by the row maximum (a constant from ``logits.data``)."""
    scores = asarray(logits.data, dtype=float)
    shifted = logits - scores.max(axis=1, keepdims=True)
    one_hot = np.eye(scores.shape[1])[y]
    return (shifted.exp().sum(axis=1).log() - (shifted * one_hot).sum(axis=1)).mean()


def mlp_forward(mlp: MLP, X: np.ndarray) -> Callable:
    """The network's output as a function of W1, b1, W2, b2, ...: Tensor operations only."""
    def output(*params):
        h = type_of(params[0])(X)
        layers = list(zip(params[::2], params[1::2]))
        for i, (W, b) in enumerate(layers):
            h = h @ W + b
            if i < len(layers) - 1:
                h = h.relu() if mlp.hidden == "relu" else h.tanh()
        return h.sigmoid() if mlp.sigmoid_output else h
    return output


@dataclass(frozen=True)
class MLPCase(Case):
    """The MLP's output as a Case, whose expected values are the manual network's: its output,
    and its parameters' gradients for the loss's gradient dL/d(output), which the check gives
    (the reference's part: the loss's operations are judged by the other cells)."""

    mlp: MLP | None = None

    @property
    def where(self) -> str:
        return (f"a batch X of shape ({self.mlp.batch}, {self.mlp.sizes[0]}), the weights of "
                f"the manual network of the earlier units, and backward(G) with G = dL/d(output) "
                f"of its {self.mlp.loss} loss")

    def expected(self, seed: int = 0) -> Expected:
        """The manual network's output and gradients for its loss's dL/d(output) (and the
        reference Tensor's graph, for the engine's mistakes)."""
        model, criterion = self.mlp.manual()
        X, y = self.mlp.data()
        output = model(X)
        criterion(output, y)
        upstream = criterion.backward()
        model.backward(upstream.copy())
        grads = dict(zip(self.inputs, (p.grad for p in model.parameters())))
        leaves = {n: ReferenceTensor(a.copy(), requires_grad=True) for n, a in self.inputs.items()}
        root = self.fn(*leaves.values())
        root.backward(upstream.copy())
        return Expected(self.inputs, output, upstream, grads, root, leaves)


def mlp_case(mlp: MLP) -> MLPCase:
    model, _ = mlp.manual()
    names = [f"{kind}{i}" for i in range(1, len(mlp.sizes)) for kind in ("W", "b")]
    inputs = {n: p.data.copy() for n, p in zip(names, model.parameters())}
    return MLPCase(f"the output of the {'-'.join(map(str, mlp.sizes))} {mlp.hidden} MLP"
                   + (" with a sigmoid output" if mlp.sigmoid_output else ""),
                   mlp_forward(mlp, mlp.data()[0]), inputs, mlp=mlp)


MLPS = (MLP((2, 16, 16, 3), "relu", False, "cross-entropy", 6, seed=0),
        MLP((2, 16, 16, 3), "relu", False, "cross-entropy", 1, seed=1),
        MLP((3, 8, 1), "tanh", True, "MSE", 5, seed=2))


@check
def tensor_mlp(Tensor):
    """The MLP of the earlier units built from Tensor operations (``X @ W + b``, relu or tanh,
    sigmoid): its output, and every parameter's gradient after ``backward(G)`` with G the
    gradient of its loss (cross-entropy or MSE, computed here: the loss's operations are the
    other cells'), equal the manual network's of ``minitorch_ref.nn`` for the same weights."""
    for mlp in MLPS:
        check_case(Tensor, mlp_case(mlp))
