r"""Reductions and shape changes: ``sum``, ``mean``, ``reshape``, transpose, indexing.

Their backward passes move gradients around without arithmetic: a sum copies
:math:`G` back to every summed entry, a reshape or transpose undoes itself, and
indexing scatters :math:`G` into zeros.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from minitorch_ref.autograd.functions.function import Function


class Sum(Function):
    r""":math:`\sum` over ``axis`` (all axes if None); every summed entry receives :math:`G`.

    Without ``keepdims`` the summed axes are first put back (size 1) so that
    :math:`G` broadcasts to the input's shape.
    """

    def __init__(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> None:
        self.axis, self.keepdims = axis, keepdims

    def forward(self, a):
        self.shape = a.shape
        self.axes = (tuple(range(a.ndim)) if self.axis is None
                     else normalize_axis_tuple(self.axis, a.ndim))
        return np.sum(a, axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        if not self.keepdims:
            grad = np.expand_dims(grad, self.axes)
        return (np.broadcast_to(grad, self.shape),)


class Mean(Sum):
    r"""Mean over ``axis``: a ``Sum`` divided by the count :math:`n` of summed entries,
    so every entry receives :math:`G / n`."""

    def forward(self, a):
        total = super().forward(a)
        self.count = int(np.prod([a.shape[i] for i in self.axes]))
        return total / np.asarray(self.count, dtype=total.dtype)

    def backward(self, grad):
        return super().backward(grad / np.asarray(self.count, dtype=grad.dtype))


class Reshape(Function):
    """The same entries in a new shape; the gradient is reshaped back."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def forward(self, a):
        self.input_shape = a.shape
        return a.reshape(self.shape)

    def backward(self, grad):
        return (grad.reshape(self.input_shape),)


class Transpose(Function):
    """Axes permuted by ``axes`` (reversed if None); the gradient gets the inverse permutation."""

    def __init__(self, axes: tuple[int, ...] | None = None) -> None:
        self.axes = axes

    def forward(self, a):
        # argsort of the axes made positive: argsort((0, -1)) would be [1, 0], not the identity
        axes = range(a.ndim)[::-1] if self.axes is None else [axis % a.ndim for axis in self.axes]
        self.inverse = np.argsort(axes)
        return np.transpose(a, self.axes)

    def backward(self, grad):
        return (np.transpose(grad, self.inverse),)


class GetItem(Function):
    """``a[index]`` with numpy indexing; the gradient is scattered into zeros with
    ``np.add.at``, so an entry picked twice receives both contributions."""

    def __init__(self, index) -> None:
        self.index = index

    def forward(self, a):
        self.shape = a.shape
        return a[self.index]

    def backward(self, grad):
        full = np.zeros(self.shape, dtype=grad.dtype)
        np.add.at(full, self.index, grad)
        return (full,)
