r"""Arithmetic with numpy broadcasting: ``+``, ``-``, ``*``, ``/``, ``**`` and ``@``.

Each binary rule first computes the gradient in the broadcast (output) shape, then
``unbroadcast`` sums it back to each input's shape.
"""
from __future__ import annotations

import numpy as np

from minitorch_ref.autograd.functions.function import Function, unbroadcast


class Add(Function):
    r""":math:`a + b`; both inputs receive :math:`G` (summed over broadcast axes)."""

    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return a + b

    def backward(self, grad):
        return unbroadcast(grad, self.shapes[0]), unbroadcast(grad, self.shapes[1])


class Sub(Function):
    r""":math:`a - b`; :math:`a` receives :math:`G`, :math:`b` receives :math:`-G`."""

    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return a - b

    def backward(self, grad):
        return unbroadcast(grad, self.shapes[0]), unbroadcast(-grad, self.shapes[1])


class Neg(Function):
    r""":math:`-a`; the gradient is :math:`-G`."""

    def forward(self, a):
        return -a

    def backward(self, grad):
        return (-grad,)


class Mul(Function):
    r""":math:`a \odot b`; :math:`a` receives :math:`G \odot b`, :math:`b` :math:`G \odot a`."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, grad):
        return unbroadcast(grad * self.b, self.a.shape), unbroadcast(grad * self.a, self.b.shape)


class Div(Function):
    r""":math:`a / b`; :math:`a` receives :math:`G / b`, :math:`b` receives :math:`-G a / b^2`."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a / b

    def backward(self, grad):
        return (unbroadcast(grad / self.b, self.a.shape),
                unbroadcast(-grad * self.a / self.b**2, self.b.shape))


class Pow(Function):
    r""":math:`a^b`, elementwise. The base receives :math:`G\, b\, a^{b-1}` (0 where
    :math:`b = 0`, as in PyTorch); the exponent receives :math:`G\, a^b \log a` (0 where
    :math:`a = 0` and :math:`b \ge 0`), computed only when it needs a gradient, so
    ``t ** 2`` never takes the log of a negative base.
    """

    def forward(self, a, b):
        self.a, self.b = a, b
        self.out = a**b
        return self.out

    def backward(self, grad):
        a, b = self.a, self.b
        grad_a = grad_b = None
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.needs(0):
                grad_a = unbroadcast(grad * np.where(b == 0, 0.0, b * a ** (b - 1)), a.shape)
            if self.needs(1):
                log_a = np.where((a == 0) & (b >= 0), 0.0, np.log(a))
                grad_b = unbroadcast(grad * self.out * log_a, b.shape)
        return grad_a, grad_b


class MatMul(Function):
    r""":math:`A B` with numpy's ``@`` rules (1-D operands, stacks of matrices).

    With :math:`G = \partial L/\partial (AB)`: :math:`A` receives :math:`G B^\top`
    and :math:`B` receives :math:`A^\top G`. A 1-D operand is treated as a row
    (left) or column (right) and squeezed back; stacked (batch) axes that were
    broadcast are summed.
    """

    def forward(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(
                f"@ needs operands with at least 1 dimension, got shapes {a.shape} and {b.shape}. "
                "Use * to scale by a scalar."
            )
        rows = b.shape[0] if b.ndim == 1 else b.shape[-2]
        if a.shape[-1] != rows:
            raise ValueError(
                f"@: shapes {a.shape} and {b.shape} do not match: the left operand has "
                f"{a.shape[-1]} columns, the right one {rows} rows. "
                "Did you mean to transpose one (.T)?"
            )
        self.a, self.b = a, b
        return a @ b

    def backward(self, grad):
        a, b = self.a, self.b
        # Work with matrices: a 1-D left operand is a row, a 1-D right one a column.
        a2 = a[np.newaxis, :] if a.ndim == 1 else a
        b2 = b[:, np.newaxis] if b.ndim == 1 else b
        g2 = grad[..., np.newaxis] if b.ndim == 1 else grad
        g2 = g2[..., np.newaxis, :] if a.ndim == 1 else g2
        grad_a = grad_b = None
        if self.needs(0):
            grad_a = unbroadcast(g2 @ np.swapaxes(b2, -1, -2), a2.shape).reshape(a.shape)
        if self.needs(1):
            grad_b = unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2.shape).reshape(b.shape)
        return grad_a, grad_b
