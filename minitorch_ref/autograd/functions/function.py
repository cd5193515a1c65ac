"""Function: one differentiable operation, with its forward and its local backward rule."""
from __future__ import annotations

import numpy as np


class Function:
    r"""An operation on numpy arrays that knows its own derivative.

    Like the layers of the earlier units, ``forward(*inputs)`` computes the output
    and saves on ``self`` what the derivative needs, and ``backward(grad)`` turns
    :math:`G = \partial L/\partial\,\mathrm{output}` into one
    :math:`\partial L/\partial\,\mathrm{input}` per input, each of that input's
    shape. The difference: nobody calls ``backward`` by hand. ``Tensor`` creates
    one instance per operation (a node of the graph) and the engine calls them in
    reverse topological order, adding up what each input receives.

    ``backward`` returns gradients instead of adding them into the inputs: the
    engine does the summing, so nothing stays behind in intermediate nodes.

    Attributes:
        needs_input_grad: one bool per input, set by ``Tensor``; a rule may skip
            (return None for) the inputs that do not need a gradient.
    """

    needs_input_grad: tuple[bool, ...] = ()

    def forward(self, *inputs: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray | None, ...]:
        raise NotImplementedError(f"{type(self).__name__} must implement backward()")

    def needs(self, index: int) -> bool:
        """Whether input ``index`` needs a gradient (True when run outside a Tensor)."""
        return not self.needs_input_grad or self.needs_input_grad[index]

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name}>"


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` down to ``shape``: the backward pass of numpy broadcasting.

    Broadcasting reuses an operand along new leading axes and along its axes of
    size 1; every reuse receives part of the gradient, so the operand's gradient
    is their sum. Axes of size 1 stay (summed with ``keepdims``).

    Shape:
        - grad: the broadcast shape; returns: ``shape``.
    """
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad
