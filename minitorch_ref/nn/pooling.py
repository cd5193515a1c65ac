"""MaxPool2d and AvgPool2d: summarise each window of each channel by one number."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn._checks import check_images, check_same_shape
from minitorch_ref.nn.im2col import Pair, add_windows, output_size, pair, windows
from minitorch_ref.nn.module import Module


class Pool2d(Module):
    """The base of ``MaxPool2d`` and ``AvgPool2d``: the window (``kernel_size``, ``stride``,
    by default the kernel size), the input's validation and the shapes forward saves."""

    def __init__(self, kernel_size: int | Pair, stride: int | Pair | None = None) -> None:
        super().__init__()
        self.kernel_size = pair(kernel_size, "kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, "stride")
        if min(*self.kernel_size, *self.stride) < 1:
            raise ValueError(f"{type(self).__name__} needs a positive kernel_size and stride, "
                             f"got kernel_size={kernel_size}, stride={stride}")
        self.input_shape = self.output_shape = None

    def _windows(self, x: np.ndarray) -> np.ndarray:
        """The windows of a checked input, ``(N, C, OH, OW, kH, kW)``; saves the shapes."""
        name = type(self).__name__
        x = check_images(name, x)
        output_size(name, x.shape[2:], self.kernel_size, self.stride)   # or a ValueError
        view = windows(x, self.kernel_size, self.stride)
        self.input_shape, self.output_shape = x.shape, view.shape[:4]
        return view

    def _check_grad(self, grad_output: np.ndarray) -> None:
        self._require_forward(self.input_shape)
        check_same_shape(f"{type(self).__name__}.backward", "grad_output", grad_output,
                         self.output_shape)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}"


class MaxPool2d(Pool2d):
    r"""The largest value of each window: :math:`Y_{n,c,i,j} = \max_{p,q} X_{n,c,\,s i+p,\,s j+q}`.

    Backward sends each :math:`G_{n,c,i,j}` to the position of its window's maximum only
    (the derivative of a max is 1 for the largest input and 0 for the others); a pixel
    that is the maximum of several overlapping windows receives the sum. Ties go to the
    first maximum in the window, row by row, as in PyTorch.

    Args:
        kernel_size: ``k`` or ``(kH, kW)``.
        stride: ``s`` or ``(sH, sW)``; default ``kernel_size`` (windows side by side).

    Shape:
        - Input: ``(N, C, H, W)``; Output: ``(N, C, OH, OW)``, ``OH = (H - kH) / sH + 1``.
    """

    def __init__(self, kernel_size: int | Pair, stride: int | Pair | None = None) -> None:
        super().__init__(kernel_size, stride)
        self.argmax = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        flat = self._windows(x).reshape(*self.output_shape, -1)
        self.argmax = flat.argmax(axis=-1)       # the first maximum, row by row
        return np.take_along_axis(flat, self.argmax[..., None], axis=-1)[..., 0]

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._check_grad(grad_output)
        kh, kw = self.kernel_size
        offsets = np.arange(kh * kw).reshape(kh, kw, 1, 1, 1, 1)
        grads = (offsets == self.argmax) * grad_output     # (kH, kW, N, C, OH, OW)
        return add_windows(grads, self.input_shape, self.stride)


class AvgPool2d(Pool2d):
    r"""The mean of each window: :math:`Y_{n,c,i,j} = \frac{1}{k_H k_W}\sum_{p,q} X_{n,c,\,s i+p,\,s j+q}`.

    Backward gives every pixel of a window :math:`G_{n,c,i,j} / (k_H k_W)`; overlapping
    windows add up.

    Args:
        kernel_size: ``k`` or ``(kH, kW)``.
        stride: ``s`` or ``(sH, sW)``; default ``kernel_size``.

    Shape:
        - Input: ``(N, C, H, W)``; Output: ``(N, C, OH, OW)``, ``OH = (H - kH) / sH + 1``.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self._windows(x).mean(axis=(-2, -1))

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._check_grad(grad_output)
        kh, kw = self.kernel_size
        share = np.asarray(grad_output) / (kh * kw)
        grads = np.broadcast_to(share, (kh, kw, *self.output_shape))
        return add_windows(grads, self.input_shape, self.stride)
