"""Linear (fully connected) layer and Identity."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn import init
from minitorch_ref.nn._checks import check_last_axis, check_same_shape
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.parameter import Parameter


class Linear(Module):
    r"""Affine map of a batch of row vectors: :math:`Y = X W + b`.

    Backward, with :math:`G = \partial L / \partial Y`:
    :math:`\partial L/\partial W = X^\top G`, :math:`\partial L/\partial b = \sum_n G_n`,
    :math:`\partial L/\partial X = G W^\top`. Parameter gradients are *added* to
    ``.grad``; the layer does not average over the batch (the loss does).

    Args:
        in_features: size of each input row.
        out_features: size of each output row.
        bias: whether to learn the additive bias ``b``.
        rng: generator for the initial values (default: the package's).
        dtype: dtype of the parameters.

    Shape:
        - Input: ``(N, in_features)``, or ``(..., in_features)`` (e.g. tokens ``(B, T, C)``:
          every row of every sequence is mapped alike)
        - Output: ``(N, out_features)``, or ``(..., out_features)``
        - ``weight``: ``(in_features, out_features)`` (the transpose of PyTorch's)
        - ``bias``: ``(out_features,)``

    Initialisation, as PyTorch's: every entry of ``weight`` and ``bias`` from
    ``U(-1/sqrt(in_features), 1/sqrt(in_features))``.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        rng: np.random.Generator | None = None,
        dtype: type = np.float64,
    ) -> None:
        super().__init__()
        if in_features < 1 or out_features < 1:
            raise ValueError(
                f"Linear needs positive sizes, got in_features={in_features}, "
                f"out_features={out_features}"
            )
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / np.sqrt(in_features)
        self.weight = Parameter(np.empty((in_features, out_features), dtype=dtype))
        init.uniform_(self.weight, -bound, bound, rng=rng)
        self.bias = None
        if bias:
            self.bias = Parameter(np.empty(out_features, dtype=dtype))
            init.uniform_(self.bias, -bound, bound, rng=rng)
        self.input = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = check_last_axis("Linear", x, self.in_features)
        self.input = x
        y = x @ self.weight.data
        if self.bias is not None:
            y += self.bias.data
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.input)
        check_same_shape("Linear.backward", "grad_output", grad_output,
                         self.input.shape[:-1] + (self.out_features,))
        x, grad = self.input, grad_output
        if x.ndim > 2:   # leading dimensions: every row is one more sample of the batch
            x, grad = x.reshape(-1, self.in_features), grad.reshape(-1, self.out_features)
        self.weight.grad += x.T @ grad
        if self.bias is not None:
            self.bias.grad += grad.sum(axis=0)
        return grad_output @ self.weight.data.T

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    """Returns its input unchanged; a placeholder in a ``Sequential``.

    Shape:
        - Input: any; Output: the same.
    """

    def __init__(self) -> None:
        super().__init__()
        self.input_shape = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        self.input_shape = np.shape(x)
        return x

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.input_shape)
        return grad_output
