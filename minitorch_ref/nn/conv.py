"""Conv2d: a learned filter bank slid over a batch of images."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn import init
from minitorch_ref.nn._checks import check_images, check_same_shape
from minitorch_ref.nn.im2col import Pair, add_windows, output_size, pair, windows
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.parameter import Parameter


class Conv2d(Module):
    r"""2-D cross-correlation of a batch of images with ``out_channels`` filters.

    :math:`Y_{n,o,i,j} = b_o + \sum_{c,p,q} X^{pad}_{n,c,\,s i+p,\,s j+q}\, W_{c,o,p,q}`,
    computed as one matrix product: with the windows of the padded input as rows
    (``im2col``, shape ``(N*OH*OW, C*kH*kW)``) and the filters as the columns of a matrix
    :math:`\tilde W` of shape ``(C*kH*kW, out_channels)``, :math:`\tilde Y = X_{col}\tilde W + b`,
    a ``Linear`` applied to every window. Backward, with :math:`\tilde G` the upstream
    gradient in the same layout: :math:`\partial L/\partial \tilde W = X_{col}^\top \tilde G`,
    :math:`\partial L/\partial b = \sum \tilde G` (over the batch and every position),
    :math:`\partial L/\partial X = \mathrm{col2im}(\tilde G \tilde W^\top)` without the padding.

    Args:
        in_channels: channels ``C`` of the input.
        out_channels: number of filters, the channels of the output.
        kernel_size: ``k`` or ``(kH, kW)``.
        stride: ``s`` or ``(sH, sW)``, the step between windows.
        padding: ``p`` or ``(pH, pW)`` rows and columns of zeros added on each side.
        bias: whether to learn one bias per filter.
        rng: generator for the initial values (default: the package's).
        dtype: dtype of the parameters.

    Shape:
        - Input: ``(N, in_channels, H, W)``
        - Output: ``(N, out_channels, OH, OW)``, ``OH = (H + 2 pH - kH) / sH + 1`` (an
          integer, or a ValueError), ``OW`` likewise
        - ``weight``: ``(in_channels, out_channels, kH, kW)``: PyTorch's with the first two
          axes swapped, as ``Linear.weight`` is PyTorch's transposed, so that a 1x1
          convolution's ``weight[:, :, 0, 0]`` is the ``(in, out)`` weight of a ``Linear``
          applied to every pixel, and ``nn.init``'s ``fan_in = shape[0] * kH * kW`` holds
        - ``bias``: ``(out_channels,)``

    Initialisation, as PyTorch's: every entry of ``weight`` and ``bias`` from
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, ``fan_in = in_channels * kH * kW`` (the inputs
    of one output value, as ``in_features`` is for ``Linear``).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | Pair,
                 stride: int | Pair = 1, padding: int | Pair = 0, bias: bool = True,
                 rng: np.random.Generator | None = None, dtype: type = np.float64) -> None:
        super().__init__()
        self.kernel_size, self.stride = pair(kernel_size, "kernel_size"), pair(stride, "stride")
        self.padding = pair(padding, "padding")
        if min(in_channels, out_channels, *self.kernel_size, *self.stride) < 1 \
                or min(self.padding) < 0:
            raise ValueError(
                f"Conv2d needs positive channels, kernel_size and stride and a padding of 0 or "
                f"more, got in_channels={in_channels}, out_channels={out_channels}, "
                f"kernel_size={kernel_size}, stride={stride}, padding={padding}")
        self.in_channels, self.out_channels = in_channels, out_channels
        shape = (in_channels, out_channels, *self.kernel_size)
        bound = 1.0 / np.sqrt(in_channels * self.kernel_size[0] * self.kernel_size[1])
        self.weight = Parameter(np.empty(shape, dtype=dtype))
        init.uniform_(self.weight, -bound, bound, rng=rng)
        self.bias = None
        if bias:
            self.bias = Parameter(np.empty(out_channels, dtype=dtype))
            init.uniform_(self.bias, -bound, bound, rng=rng)
        self.cols = self.padded_shape = None

    def _filters(self) -> np.ndarray:
        """The weight as a ``(kH*kW*C, out_channels)`` matrix, rows in the order of a window's
        row in ``self.cols``."""
        return self.weight.data.transpose(2, 3, 0, 1).reshape(-1, self.out_channels)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = check_images("Conv2d", x, self.in_channels)
        n, c, h, w = x.shape
        oh, ow = output_size("Conv2d", (h, w), self.kernel_size, self.stride, self.padding)
        (ph, pw) = self.padding
        # Channels last, so that a window's row is (p, q, c) with the channels contiguous:
        # it copies several times faster than im2col's (c, p, q) order (bench/conv.py).
        padded = np.zeros((n, h + 2 * ph, w + 2 * pw, c), dtype=x.dtype)
        padded[:, ph:ph + h, pw:pw + w] = x.transpose(0, 2, 3, 1)
        self.padded_shape = padded.shape
        view = windows(padded, self.kernel_size, self.stride, axes=(1, 2))
        self.cols = view.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, -1)
        y = self.cols @ self._filters()
        if self.bias is not None:
            y += self.bias.data
        return y.reshape(n, oh, ow, self.out_channels).transpose(0, 3, 1, 2)

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.cols)
        n, hp, wp, c = self.padded_shape
        (kh, kw), (ph, pw) = self.kernel_size, self.padding
        oh, ow = (hp - kh) // self.stride[0] + 1, (wp - kw) // self.stride[1] + 1
        check_same_shape("Conv2d.backward", "grad_output", grad_output,
                         (n, self.out_channels, oh, ow))
        g = grad_output.transpose(0, 2, 3, 1).reshape(-1, self.out_channels)
        grad_filters = self.cols.T @ g               # (kH*kW*C, out_channels)
        self.weight.grad += grad_filters.reshape(kh, kw, c, -1).transpose(2, 3, 0, 1)
        if self.bias is not None:
            self.bias.grad += g.sum(axis=0)
        grad_cols = (g @ self._filters().T).reshape(n, oh, ow, kh, kw, c)
        grad_padded = add_windows(grad_cols.transpose(3, 4, 0, 1, 2, 5), self.padded_shape,
                                  self.stride, axes=(1, 2))
        return grad_padded[:, ph:hp - ph, pw:wp - pw].transpose(0, 3, 1, 2)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if any(self.padding):
            text += f", padding={self.padding}"
        return text + ("" if self.bias is not None else ", bias=False")
