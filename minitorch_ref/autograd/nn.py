r"""The MLP of the earlier units, rebuilt on Tensors: modules with a forward and no backward.

The classes plug into the manual framework instead of copying it: ``Module`` is a
``minitorch_ref.nn.Module`` (so ``parameters()``, ``state_dict()``, ``train()``
and ``print(model)`` work) and ``Parameter`` is both a ``Tensor`` and a
``minitorch_ref.nn.Parameter``, so every optimizer and scheduler of
``minitorch_ref.optim`` trains these models unchanged: an optimizer only reads
``param.data`` and ``param.grad``, and autograd fills ``grad`` in.

The usual loop::

    optimizer.zero_grad()
    loss = cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()
"""
from __future__ import annotations

import numpy as np

from minitorch_ref import nn as manual
from minitorch_ref.autograd.tensor import Tensor
from minitorch_ref.nn._checks import check_features
from minitorch_ref.nn.loss import _check_class_scores

__all__ = ["Parameter", "Module", "Linear", "ReLU", "Tanh", "Sigmoid", "Sequential",
           "cross_entropy", "mse_loss"]


class Parameter(Tensor, manual.Parameter):
    """A leaf Tensor to learn: requires grad, registered by Modules, accepted by optimizers.

    Its ``grad`` follows ``minitorch_ref.nn.Parameter``'s contract rather than a
    plain Tensor's: it starts as zeros (not None), backward adds into it in
    place, and ``zero_grad()`` refills it with zeros. The optimizers rely on
    this: they read ``param.grad`` as an array and never skip a None.

    Args:
        data: the initial values (shared, not copied); integers become float64.
    """

    def __init__(self, data: np.ndarray) -> None:
        super().__init__(data, requires_grad=True)
        self.grad = np.zeros_like(self.data)

    def zero_grad(self) -> None:
        if self.grad is None:  # someone set grad = None, PyTorch style
            self.grad = np.zeros_like(self.data)
        self.grad.fill(0)

    def __repr__(self) -> str:
        return f"Parameter containing:\n{super().__repr__()}"


class Module(manual.Module):
    """Base of the autograd modules: implement ``forward`` on Tensors; there is no ``backward``.

    Calling a module wraps numpy inputs in (constant) Tensors, so ``model(X)``
    works on a plain batch and returns a Tensor.
    """

    def __call__(self, *inputs: Tensor | np.ndarray) -> Tensor:
        return self.forward(*(x if isinstance(x, Tensor) else Tensor(x) for x in inputs))

    def backward(self, *args) -> None:
        raise RuntimeError(
            f"{type(self).__name__} is an autograd module: it has no backward(). "
            "Call .backward() on the loss Tensor instead."
        )


class Linear(Module):
    r"""Affine map of a batch of row vectors: :math:`Y = X W + b`, differentiated by autograd.

    The forward records a MatMul and an Add node; their rules give
    :math:`\partial L/\partial W = X^\top G`, :math:`\partial L/\partial X = G W^\top`
    and, because ``b`` was broadcast over the batch,
    :math:`\partial L/\partial b = \sum_n G_n`: the same formulas as the manual layer.

    Args:
        in_features, out_features, bias, rng, dtype: as ``minitorch_ref.nn.Linear``.

    Shape:
        - Input: ``(N, in_features)``
        - Output: ``(N, out_features)``
        - ``weight``: ``(in_features, out_features)``, as ``minitorch_ref.nn.Linear``
        - ``bias``: ``(out_features,)``

    Initialisation: that of ``minitorch_ref.nn.Linear``, which draws the values, so
    the same seed gives both layers the same weights.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 rng: np.random.Generator | None = None, dtype: type = np.float64) -> None:
        super().__init__()
        # One implementation of the checks and the initialisation: the manual layer's.
        manual_layer = manual.Linear(in_features, out_features, bias=bias, rng=rng, dtype=dtype)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(manual_layer.weight.data)
        self.bias = None if manual_layer.bias is None else Parameter(manual_layer.bias.data)

    def forward(self, x: Tensor) -> Tensor:
        check_features("Linear", x.data, self.in_features)
        y = x @ self.weight
        return y if self.bias is None else y + self.bias

    extra_repr = manual.Linear.extra_repr


class ReLU(Module):
    """:math:`\\max(0, x)` elementwise. Shape: any; output the same."""

    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


class Tanh(Module):
    """:math:`\\tanh(x)` elementwise. Shape: any; output the same."""

    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Sigmoid(Module):
    """:math:`\\sigma(x) = 1/(1 + e^{-x})` elementwise. Shape: any; output the same."""

    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Sequential(Module, manual.Sequential):
    """Apply modules in order: ``minitorch_ref.nn.Sequential``, with autograd doing the backward.

    Shape:
        - Input: what the first module takes; Output: what the last returns.
    """

    def __getitem__(self, index: int | slice) -> Module:
        if isinstance(index, slice):
            return Sequential(*list(self)[index])
        return manual.Sequential.__getitem__(self, index)


def cross_entropy(logits: Tensor, target: np.ndarray) -> Tensor:
    r"""Mean softmax cross-entropy, built from Tensor operations (no backward of its own):
    :math:`\ell_n = \log\sum_c e^{Z_{nc} - m_n} - (Z_{n y_n} - m_n)`,
    with :math:`m_n = \max_c Z_{nc}`.

    The shift :math:`m_n` is a constant (taken from ``.data``): it keeps ``exp``
    from overflowing and cancels in :math:`\ell_n`, so the value and the gradient,
    :math:`(\mathrm{softmax}(Z) - \mathrm{onehot}(y)) / N`, are those of
    ``minitorch_ref.nn.CrossEntropyLoss``.

    Shape:
        - logits: ``(N, C)``; target: integer classes ``(N,)`` in ``[0, C)``; returns: ``()``.
    """
    logits = logits if isinstance(logits, Tensor) else Tensor(logits)
    scores, target = _check_class_scores("cross_entropy", logits.data, target)
    one_hot = np.zeros_like(scores)
    one_hot[np.arange(len(target)), target] = 1
    shifted = logits - scores.max(axis=1, keepdims=True)
    log_sum_exp = shifted.exp().sum(axis=1).log()
    return (log_sum_exp - (shifted * one_hot).sum(axis=1)).mean()


def mse_loss(pred: Tensor, target: Tensor | np.ndarray) -> Tensor:
    r"""Mean squared error :math:`\frac{1}{M}\sum (\hat y - y)^2` over all M elements.

    Shape:
        - pred and target: the same shape (no broadcasting: (N, 1) against (N,)
          would silently compare every pair); returns: ``()``.
    """
    target_shape = np.shape(target.data if isinstance(target, Tensor) else target)
    if pred.shape != target_shape:
        raise ValueError(
            f"mse_loss: prediction shape {pred.shape} and target shape {target_shape} differ; "
            "broadcasting them would compute the wrong loss. Reshape one of them "
            "(e.g. y.reshape(-1, 1))."
        )
    return ((pred - target) ** 2).mean()
