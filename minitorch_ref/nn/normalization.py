"""Layer normalisation: statistics of each sample over its last dimensions."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn._checks import check_floating, check_same_shape
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.parameter import Parameter


class LayerNorm(Module):
    r"""Normalise each sample over its last ``len(normalized_shape)`` dimensions.

    For one token's features :math:`x \in \mathbb{R}^C` (with ``normalized_shape=C``):
    :math:`\mu = \tfrac1C \sum_i x_i`, :math:`\sigma^2 = \tfrac1C \sum_i (x_i - \mu)^2`
    (biased, as PyTorch's), :math:`\hat x = (x - \mu) / \sqrt{\sigma^2 + \epsilon}` and
    :math:`y = \hat x \odot \gamma + \beta`. Unlike ``BatchNorm1d`` the statistics are
    each token's own: no running estimates, the same computation in training and eval.

    Backward, with :math:`g = \partial L/\partial y` and :math:`\hat g = g \odot \gamma`:
    :math:`\partial L/\partial x = \frac{1}{\sqrt{\sigma^2+\epsilon}}\,(\hat g
    - \overline{\hat g} - \hat x\, \overline{\hat g \odot \hat x})`, bars the means over the
    normalised dimensions; :math:`\partial L/\partial\gamma = \sum g \odot \hat x` and
    :math:`\partial L/\partial\beta = \sum g` over every leading position.

    Args:
        normalized_shape: the trailing shape to normalise over (an int for the last axis).
        eps: added to the variance before the square root.
        elementwise_affine: whether to learn ``weight`` (:math:`\gamma`, ones) and
            ``bias`` (:math:`\beta`, zeros).
        bias: whether to learn ``bias`` (with ``elementwise_affine``).
        dtype: dtype of the parameters.

    Shape:
        - Input: ``(*, *normalized_shape)``, e.g. ``(B, T, C)``; Output: the same.
        - ``weight``, ``bias``: ``normalized_shape``.
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 dtype: type = np.float64) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(size) for size in shape)
        if not self.normalized_shape or min(self.normalized_shape) < 1:
            raise ValueError(f"LayerNorm needs a non-empty shape of positive sizes, got "
                             f"normalized_shape={normalized_shape!r}")
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(np.zeros(self.normalized_shape, dtype=dtype))
        self.normalized = self.inv_std = None

    @property
    def axes(self) -> tuple[int, ...]:
        """The normalised axes, counted from the end."""
        return tuple(range(-len(self.normalized_shape), 0))

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = self._check(x)
        mean = x.mean(axis=self.axes, keepdims=True)
        centred = x - mean
        variance = np.mean(centred * centred, axis=self.axes, keepdims=True)
        self.inv_std = 1.0 / np.sqrt(variance + self.eps)
        self.normalized = centred * self.inv_std
        if self.weight is None:
            return self.normalized.copy()
        y = self.normalized * self.weight.data
        if self.bias is not None:
            y += self.bias.data
        return y

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.normalized)
        check_same_shape("LayerNorm.backward", "grad_output", grad_output, self.normalized.shape)
        leading = tuple(range(grad_output.ndim - len(self.normalized_shape)))
        grad_hat = grad_output
        if self.weight is not None:
            self.weight.grad += np.sum(grad_output * self.normalized, axis=leading)
            grad_hat = grad_output * self.weight.data
        if self.bias is not None:
            self.bias.grad += np.sum(grad_output, axis=leading)
        mean_grad = grad_hat.mean(axis=self.axes, keepdims=True)
        mean_proj = np.mean(grad_hat * self.normalized, axis=self.axes, keepdims=True)
        return self.inv_std * (grad_hat - mean_grad - self.normalized * mean_proj)

    def _check(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        count = len(self.normalized_shape)
        if x.shape[x.ndim - count:] != self.normalized_shape or x.ndim < count:
            trailing = ", ".join(map(str, self.normalized_shape))
            raise ValueError(f"LayerNorm expected input of shape (*, {trailing}), got "
                             f"{x.shape}: its last {count} dimension(s) must be "
                             f"normalized_shape={self.normalized_shape}.")
        check_floating("LayerNorm", x)
        return x

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
