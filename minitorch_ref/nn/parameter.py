"""Parameter: a learnable array together with its accumulated gradient."""
from __future__ import annotations

import numpy as np


class Parameter:
    """A learnable array with a gradient of the same shape.

    ``grad`` starts at zeros and *accumulates*: every ``backward`` adds to it, and
    only ``zero_grad`` (of the module or of the optimizer) resets it, as in PyTorch.

    Args:
        data: the initial values; integer arrays are converted to float64.
    """

    def __init__(self, data: np.ndarray) -> None:
        data = np.asarray(data)
        if not np.issubdtype(data.dtype, np.floating):
            data = data.astype(np.float64)
        self.data = data
        self.grad = np.zeros_like(data)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def size(self) -> int:
        return self.data.size

    def zero_grad(self) -> None:
        """Reset the gradient in place (arrays handed out by ``grads()`` stay valid)."""
        self.grad.fill(0)

    def __repr__(self) -> str:
        return f"Parameter(shape={self.shape}, dtype={self.dtype})\n{self.data!r}"
