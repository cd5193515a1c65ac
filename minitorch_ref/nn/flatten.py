"""Flatten: reshape each sample into one row."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn._checks import check_same_shape
from minitorch_ref.nn.module import Module


class Flatten(Module):
    """Merge dimensions ``start_dim..end_dim`` into one, e.g. images to rows.

    Backward reshapes the gradient back to the input's shape.

    Shape:
        - Input: ``(N, *dims)``; Output: ``(N, prod(dims))`` with the defaults.
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim
        self.input_shape = self.output_shape = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        for dim in (self.start_dim, self.end_dim):
            if not -x.ndim <= dim < x.ndim:
                raise ValueError(
                    f"Flatten(start_dim={self.start_dim}, end_dim={self.end_dim}) cannot "
                    f"flatten an input of shape {x.shape}: dim {dim} is out of range."
                )
        start = self.start_dim % x.ndim
        end = self.end_dim % x.ndim
        self.input_shape = x.shape
        output = x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:])
        self.output_shape = output.shape
        return output

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.input_shape)
        check_same_shape("Flatten.backward", "grad_output", grad_output, self.output_shape)
        return np.reshape(grad_output, self.input_shape)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
