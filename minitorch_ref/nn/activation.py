"""Parameter-free activations: elementwise ones and the softmax family."""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from minitorch_ref.nn._checks import check_floating, check_same_shape
from minitorch_ref.nn._normal import normal_cdf
from minitorch_ref.nn.module import Module


class Activation(Module):
    r"""Base of the parameter-free activations.

    Elementwise ones, :math:`Y = f(X)`, implement ``function(x)`` and
    ``derivative()`` (:math:`f'(X)`, from the saved ``self.input``/``self.output``);
    backward is then :math:`\partial L/\partial X = \partial L/\partial Y \odot f'(X)`.
    Activations that mix entries (Softmax) override ``input_gradient`` instead.

    Shape:
        - Input: ``(N, *)``; Output: the same shape.
    """

    def __init__(self) -> None:
        super().__init__()
        self.input = None
        self.output = None

    def function(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement function()")

    def derivative(self) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement derivative()")

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        check_floating(type(self).__name__, x)
        self.input = x
        self.output = self.function(x)
        return self.output

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.output)
        check_same_shape(f"{type(self).__name__}.backward", "grad_output",
                         grad_output, self.output.shape)
        return self.input_gradient(grad_output)

    def input_gradient(self, grad_output: np.ndarray) -> np.ndarray:
        """dL/dX from dL/dY; elementwise activations multiply by f'(X)."""
        return grad_output * self.derivative()


class ReLU(Activation):
    """:math:`\\max(0, x)`; the gradient at exactly 0 is 0, as in PyTorch."""

    def function(self, x):
        return np.maximum(x, 0)

    def derivative(self):
        return (self.input > 0).astype(self.input.dtype)


class LeakyReLU(Activation):
    """:math:`x` for :math:`x > 0`, else ``negative_slope * x`` (slope also used at 0)."""

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def function(self, x):
        return np.where(x > 0, x, self.negative_slope * x)

    def derivative(self):
        return np.where(self.input > 0, 1.0, self.negative_slope).astype(self.input.dtype)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Sigmoid(Activation):
    """:math:`\\sigma(x) = 1 / (1 + e^{-x})`, computed without overflow; :math:`\\sigma' = y(1-y)`."""

    def function(self, x):
        return special.expit(x)

    def derivative(self):
        return self.output * (1 - self.output)


class Tanh(Activation):
    """:math:`\\tanh(x)`; :math:`\\tanh' = 1 - y^2`."""

    def function(self, x):
        return np.tanh(x)

    def derivative(self):
        return 1 - self.output**2


class GELU(Activation):
    r"""Gaussian error linear unit: :math:`x\,\Phi(x)`, :math:`\Phi` the normal CDF.

    Args:
        approximate: ``'none'`` (exact, with erf) or ``'tanh'``:
            :math:`\tfrac12 x (1 + \tanh(\sqrt{2/\pi}(x + 0.044715 x^3)))`.
    """

    _K = math.sqrt(2 / math.pi)
    _C = 0.044715

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate
        self.cdf = None

    def function(self, x):
        if self.approximate == "tanh":
            return 0.5 * x * (1 + np.tanh(self._K * (x + self._C * x**3)))
        self.cdf = normal_cdf(x)   # Phi(x), kept for the derivative
        return x * self.cdf

    def derivative(self):
        x = self.input
        if self.approximate == "tanh":
            t = np.tanh(self._K * (x + self._C * x**3))
            return 0.5 * (1 + t) + 0.5 * x * (1 - t**2) * self._K * (1 + 3 * self._C * x**2)
        # Phi(x) + x * phi(x), with phi(x) = exp(-x^2 / 2) / sqrt(2 pi): in place, one buffer
        slope = np.multiply(x, x)
        slope *= -0.5
        np.exp(slope, out=slope)
        slope *= x
        slope *= 1 / math.sqrt(2 * math.pi)
        slope += self.cdf
        return slope

    def extra_repr(self) -> str:
        return f"approximate='{self.approximate}'"


class Softmax(Activation):
    r"""Normalised exponentials along ``dim``: :math:`y_i = e^{x_i} / \sum_j e^{x_j}`.

    Computed as :math:`e^{x_i - \max x}` so large logits do not overflow. Backward
    is the Jacobian-vector product
    :math:`\partial L/\partial x = y \odot (g - \sum_j g_j y_j)`.
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def function(self, x):
        return special.softmax(x, axis=self.dim)

    def input_gradient(self, grad_output):
        y = self.output
        return y * (grad_output - np.sum(grad_output * y, axis=self.dim, keepdims=True))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    r"""Log of the softmax, :math:`x_i - \log\sum_j e^{x_j}` (stable log-sum-exp).

    Backward: :math:`\partial L/\partial x = g - \mathrm{softmax}(x) \sum_j g_j`.
    """

    def function(self, x):
        return special.log_softmax(x, axis=self.dim)

    def input_gradient(self, grad_output):
        softmax = np.exp(self.output)
        return grad_output - softmax * np.sum(grad_output, axis=self.dim, keepdims=True)
