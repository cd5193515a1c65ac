"""What the convolution checks share: the configurations they try, the reference's output
for given filters, and the classic mistakes computed the way a student's code computes
them, so that a message can name the mistake a wrong array matches.

Everything here is the course's layout: images ``(N, C, H, W)``, filters ``(C, O, k, k)``,
im2col rows ``(n, i, j)`` with columns ``(c, p, q)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import minitorch_ref
from minitorch_ref import nn
from minitorch_ref.nn.im2col import add_windows


@dataclass(frozen=True)
class ConvCase:
    """One convolution: the input's shape, the filters, stride, padding and seed."""

    batch: int
    in_channels: int
    out_channels: int
    height: int
    width: int
    kernel: int
    stride: int = 1
    padding: int = 0
    seed: int = 0
    bias: bool = True
    scale: float = 1.0

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return self.batch, self.in_channels, self.height, self.width

    @property
    def out_shape(self) -> tuple[int, int, int, int]:
        size = [(n + 2 * self.padding - self.kernel) // self.stride + 1
                for n in (self.height, self.width)]
        return self.batch, self.out_channels, size[0], size[1]

    def inputs(self) -> tuple[np.ndarray, np.ndarray]:
        """``x`` and an upstream gradient of the output's shape."""
        rng = np.random.default_rng(self.seed)
        return (self.scale * rng.standard_normal(self.shape),
                rng.standard_normal(self.out_shape))

    def filters(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Random filters ``(C, O, k, k)`` and a bias (or None), not the layer's initial ones."""
        rng = np.random.default_rng(self.seed + 50)
        weight = rng.standard_normal((self.in_channels, self.out_channels, self.kernel,
                                      self.kernel))
        return weight, rng.standard_normal(self.out_channels) if self.bias else None

    @property
    def layer_args(self) -> tuple[tuple, dict]:
        """``Conv2d(*args, **kwargs)`` for this case."""
        return ((self.in_channels, self.out_channels, self.kernel),
                {"stride": self.stride, "padding": self.padding, "bias": self.bias})

    def __str__(self) -> str:
        scale = f", values ~{self.scale:g}" if self.scale != 1 else ""
        bias = "" if self.bias else ", bias=False"
        return (f"input of shape {self.shape}{scale}, {self.out_channels} filters of "
                f"{self.kernel}x{self.kernel}, stride={self.stride}, padding={self.padding}{bias}")


# The Conv2d cells' configurations: stride 1 without padding (forward, dL/dx, dL/dW), values
# ~1000 (forward), strides 2 and 3 (the stride cell), padding 1 and 2 (the padding cell).
CASES = (ConvCase(2, 3, 4, 5, 6, 3, seed=0), ConvCase(1, 1, 2, 4, 4, 2, seed=1),
         ConvCase(3, 2, 3, 6, 5, 3, seed=2, bias=False), ConvCase(2, 2, 1, 3, 3, 3, seed=3))
LARGE = ConvCase(2, 2, 3, 4, 4, 2, seed=4, scale=1e3)
STRIDE_CASES = (ConvCase(2, 2, 3, 7, 5, 3, stride=2, seed=5),
                ConvCase(1, 3, 2, 9, 9, 3, stride=3, seed=6),
                ConvCase(2, 2, 2, 6, 8, 2, stride=2, seed=7),
                ConvCase(2, 1, 2, 5, 7, 3, stride=2, padding=1, seed=8))
PADDING_CASES = (ConvCase(2, 2, 3, 5, 6, 3, padding=1, seed=9),
                 ConvCase(1, 3, 2, 4, 4, 3, padding=2, seed=10),
                 ConvCase(2, 1, 2, 2, 3, 3, padding=1, seed=11))


def reference_layer(case: ConvCase, **extra) -> nn.Conv2d:
    """The reference's layer for ``case``, with the filters a Conv2d cell gives both layers."""
    args, kwargs = case.layer_args
    minitorch_ref.manual_seed(case.seed)
    return nn.Conv2d(*args, **kwargs, **extra)


def windows_input(case: ConvCase) -> np.ndarray:
    """What a layer of ``case`` gives im2col: its input, padded."""
    return pad(case.inputs()[0], case.padding, case.padding)


def scatter_input(case: ConvCase) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """What a layer of ``case`` gives col2im in its backward pass for the case's upstream
    gradient: the rows ``G @ W.T`` and the padded input's shape."""
    n, c, h, w = case.shape
    grad_output = case.inputs()[1]
    weight = reference_layer(case).weight.data
    rows = grad_output.transpose(0, 2, 3, 1).reshape(-1, case.out_channels) \
        @ filter_matrix(weight).T
    return rows, (n, c, h + 2 * case.padding, w + 2 * case.padding)


def reference_conv(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, stride: int,
                   padding: int) -> np.ndarray:
    """The reference ``Conv2d``'s output for these filters."""
    c, o, k, _ = weight.shape
    layer = nn.Conv2d(c, o, k, stride=stride, padding=padding, bias=bias is not None)
    layer.weight.data = weight.copy()
    if bias is not None:
        layer.bias.data = bias.copy()
    return layer(x)


# ---------------------------------------------------------------------------- wrong layouts
def filter_matrix(weight: np.ndarray, order: str = "cpq") -> np.ndarray:
    """The filters as a ``(C*k*k, O)`` matrix with rows in ``order``; ``"raw"`` is
    ``weight.reshape(-1, O)``, which keeps the out_channels axis in the middle."""
    c, o, k, _ = weight.shape
    layouts = {"cpq": (0, 2, 3, 1), "pqc": (2, 3, 0, 1), "raw": (0, 1, 2, 3)}
    return weight.transpose(layouts[order]).reshape(-1, o)


def rows(x: np.ndarray, kernel: int, stride: int, order: str = "cpq") -> np.ndarray:
    """im2col of ``x`` (padded) with columns in ``order``: ``"cpq"`` (right) or ``"pqc"``."""
    cols = nn.im2col(x, kernel, stride)
    if order == "pqc":
        c = x.shape[1]
        cols = cols.reshape(len(cols), c, kernel * kernel).transpose(0, 2, 1).reshape(len(cols), -1)
    return cols


def pad(x: np.ndarray, before: int, after: int) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (before, after), (before, after)))


def conv_as(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, stride: int,
            pads: tuple[int, int], rows_order: str = "cpq", filters_order: str = "cpq",
            channels_moved: bool = True) -> np.ndarray:
    """A convolution computed as im2col code computes it, with the layouts given: the product
    of the rows and the filter matrix, plus the bias, reshaped into ``(N, O, OH, OW)``
    (``channels_moved=False``: reshaped straight from ``(N*OH*OW, O)``, without moving the
    channel axis)."""
    k, o = weight.shape[2], weight.shape[1]
    x = pad(x, *pads)
    oh, ow = ((size - k) // stride + 1 for size in x.shape[2:])
    y = rows(x, k, stride, rows_order) @ filter_matrix(weight, filters_order)
    if bias is not None:
        y = y + bias
    if not channels_moved:
        return y.reshape(len(x), o, oh, ow)
    return y.reshape(len(x), oh, ow, o).transpose(0, 3, 1, 2)


# ---------------------------------------------------------------------------- wrong scatters
def fancy_add(cols: np.ndarray, shape: tuple[int, ...], kernel: int, stride: int) -> np.ndarray:
    """col2im written ``out[index] += cols``: where windows overlap, numpy keeps one of the
    values (the last) instead of adding them all."""
    source = nn.im2col(np.arange(int(np.prod(shape))).reshape(shape), kernel, stride)
    out = np.zeros(int(np.prod(shape)))
    out[source] += cols
    return out.reshape(shape)


def offsets_without_stride(cols: np.ndarray, shape: tuple[int, ...], kernel: int,
                           stride: int) -> np.ndarray:
    """col2im that puts window ``(i, j)`` at ``(i + p, j + q)``, as if the stride were 1."""
    n, c, h, w = shape
    oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    grads = cols.reshape(n, oh, ow, c, kernel, kernel).transpose(4, 5, 0, 3, 1, 2)
    return add_windows(grads, shape, (1, 1))


def window_grads(x_shape: tuple[int, ...], weight: np.ndarray, grad_output: np.ndarray,
                 stride: int, padding: int, scatter=None) -> np.ndarray:
    """dL/d(padded x) as ``col2im(G @ W.T)`` with the scatter given (the reference's col2im
    by default)."""
    n, c, h, w = x_shape
    k, o = weight.shape[2], weight.shape[1]
    g = grad_output.transpose(0, 2, 3, 1).reshape(-1, o)
    shape = (n, c, h + 2 * padding, w + 2 * padding)
    return (scatter or nn.col2im)(g @ filter_matrix(weight).T, shape, k, stride)


def input_grad_as(x_shape: tuple[int, ...], weight: np.ndarray, grad_output: np.ndarray,
                  stride: int, padding: int, scatter=None, corner: bool = False) -> np.ndarray:
    """dL/dx as a student's backward computes it: ``window_grads``, then cropped to the input,
    from the centre (right) or from the top-left corner (``corner``)."""
    grad = window_grads(x_shape, weight, grad_output, stride, padding, scatter)
    h, w = x_shape[2:]
    start = 0 if corner else padding
    return grad[:, :, start:start + h, start:start + w]
