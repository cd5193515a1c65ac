"""Dropout: randomly zero activations while training."""
from __future__ import annotations

import numpy as np

from minitorch_ref._random import resolve_rng
from minitorch_ref.nn._checks import check_floating, check_same_shape
from minitorch_ref.nn.module import Module


class Dropout(Module):
    r"""Inverted dropout: in training, :math:`Y = X \odot M / (1-p)` with
    :math:`M_{ij} \sim \mathrm{Bernoulli}(1-p)`; in eval, :math:`Y = X`.

    Scaling by :math:`1/(1-p)` while training keeps :math:`E[Y] = X`, so nothing
    changes at evaluation time. Backward multiplies by the same mask and scale.

    Args:
        p: probability of zeroing an element, in ``[0, 1)``.
        rng: generator for the masks (default: the package's, at each call).

    Shape:
        - Input: any; Output: the same shape.
    """

    def __init__(self, p: float = 0.5, rng: np.random.Generator | None = None) -> None:
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout probability p must be in [0, 1), got {p}")
        self.p = p
        self.rng = rng
        self.mask = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        check_floating("Dropout", x)
        if not self.training or self.p == 0:
            self.mask = np.ones((), dtype=x.dtype)  # backward is the identity
            return x
        keep = resolve_rng(self.rng).random(x.shape) >= self.p
        self.mask = keep.astype(x.dtype) / (1 - self.p)
        return x * self.mask

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.mask)
        if self.mask.ndim:
            check_same_shape("Dropout.backward", "grad_output", grad_output, self.mask.shape)
        return grad_output * self.mask

    def extra_repr(self) -> str:
        return f"p={self.p}"
