r"""Elementwise functions: ``exp``, ``log``, ``relu``, ``tanh``, ``sigmoid``.

Each backward is :math:`G \odot f'(x)`, with :math:`f'` written from whichever of
the input or the output is cheaper to reuse.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from minitorch_ref.autograd.functions.function import Function


class Exp(Function):
    r""":math:`e^x`; :math:`f' = e^x`, the output itself."""

    def forward(self, a):
        self.out = np.exp(a)
        return self.out

    def backward(self, grad):
        return (grad * self.out,)


class Log(Function):
    r"""Natural log :math:`\log x`; :math:`f' = 1/x`."""

    def forward(self, a):
        self.a = a
        return np.log(a)

    def backward(self, grad):
        return (grad / self.a,)


class ReLU(Function):
    r""":math:`\max(0, x)`; :math:`f' = [x > 0]` (0 at exactly 0, as in PyTorch)."""

    def forward(self, a):
        self.positive = a > 0
        return np.where(self.positive, a, 0).astype(a.dtype, copy=False)

    def backward(self, grad):
        return (grad * self.positive,)


class Tanh(Function):
    r""":math:`\tanh x`; :math:`f' = 1 - y^2`."""

    def forward(self, a):
        self.out = np.tanh(a)
        return self.out

    def backward(self, grad):
        return (grad * (1 - self.out**2),)


class Sigmoid(Function):
    r""":math:`\sigma(x) = 1/(1 + e^{-x})`, without overflow; :math:`f' = y(1 - y)`."""

    def forward(self, a):
        self.out = special.expit(a)
        return self.out

    def backward(self, grad):
        return (grad * self.out * (1 - self.out),)
