"""Unit 13's convolution and pooling, each with one classic student bug.

The Conv2d mutants share ``_Steps``: the layer as the notebook builds it (np.pad, im2col,
one product with the filter matrix, col2im, the crop), one method per step, so that each
mutant replaces exactly the step its bug lives in. The pooling mutants route the gradient
window by window, as a first implementation does.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from autograder.mutants import Mutant
from minitorch_ref import nn


# ---------------------------------------------------------------------------- all layers
def _keeping_first(base: type, saved: str) -> type:
    """``base`` whose forward keeps what it saved as ``saved`` at its first call only."""
    def forward(self, x):
        first = getattr(self, saved, None)
        y = base.forward(self, x)
        if first is not None:
            setattr(self, saved, first)
        return y
    return type(f"{base.__name__}KeepingFirst", (base,), {"forward": forward})


def _backward_float64(base: type) -> type:
    """``base`` whose backward returns dL/dx in float64 whatever its input's dtype."""
    def backward(self, grad_output):
        return base.backward(self, grad_output).astype(np.float64)
    return type(f"{base.__name__}BackwardFloat64", (base,), {"backward": backward})


# ---------------------------------------------------------------------------- Conv2d
class _Steps(nn.Conv2d):
    """Conv2d in the notebook's steps, each a method a mutant can replace."""

    def pad(self, x):
        p = self.padding[0]
        return np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))

    def rows(self, padded):
        return nn.im2col(padded, self.kernel_size, self.stride)

    def matrix(self):
        return self.weight.data.transpose(0, 2, 3, 1).reshape(-1, self.out_channels)

    def shaped(self, y, n, oh, ow):
        return y.reshape(n, oh, ow, self.out_channels).transpose(0, 3, 1, 2)

    def scatter(self, cols, shape):
        return nn.col2im(cols, shape, self.kernel_size, self.stride)

    def crop(self, grad):
        p = self.padding[0]
        h, w = self.input_shape[2:]
        return grad[:, :, p:p + h, p:p + w]

    def weight_grad(self, g):
        k = self.kernel_size[0]
        return (self.cols.T @ g).reshape(self.in_channels, k, k, -1).transpose(0, 3, 1, 2)

    def bias_grad(self, grad_output, g):
        return g.sum(axis=0)

    def forward(self, x):
        x = np.asarray(x)
        padded = self.pad(x)
        self.input_shape, self.padded_shape = x.shape, padded.shape
        self.cols = self.rows(padded)
        k, s = self.kernel_size[0], self.stride[0]
        oh, ow = ((size - k) // s + 1 for size in padded.shape[2:])
        y = self.cols @ self.matrix()
        if self.bias is not None:
            y = y + self.bias.data
        return self.shaped(y, len(x), oh, ow)

    def backward(self, grad_output):
        g = grad_output.transpose(0, 2, 3, 1).reshape(-1, self.out_channels)
        self.add_grads(grad_output, g)
        return self.crop(self.scatter(g @ self.matrix().T, self.padded_shape))

    def add_grads(self, grad_output, g):
        self.weight.grad += self.weight_grad(g)
        if self.bias is not None:
            self.bias.grad += self.bias_grad(grad_output, g)


class ConvKernelFlipped(_Steps):
    def matrix(self):
        flipped = self.weight.data[:, :, ::-1, ::-1]
        return flipped.transpose(0, 2, 3, 1).reshape(-1, self.out_channels)

    def weight_grad(self, g):
        return super().weight_grad(g)[:, :, ::-1, ::-1]


class ConvPaddedOnOneSide(_Steps):
    def pad(self, x):
        p = self.padding[0]
        return np.pad(x, ((0, 0), (0, 0), (0, 2 * p), (0, 2 * p)))

    def crop(self, grad):
        h, w = self.input_shape[2:]
        return grad[:, :, :h, :w]


class ConvCropFromCorner(_Steps):
    def crop(self, grad):
        h, w = self.input_shape[2:]
        return grad[:, :, :h, :w]


class ConvCropPToMinusP(_Steps):
    def crop(self, grad):
        p = self.padding[0]
        return grad[:, :, p:-p, p:-p]


class ConvStrideIgnoredInBackward(_Steps):
    def scatter(self, cols, shape):
        n, c, h, w = shape
        k, s = self.kernel_size[0], self.stride[0]
        oh, ow = (h - k) // s + 1, (w - k) // s + 1
        grads = cols.reshape(n, oh, ow, c, k, k)
        out = np.zeros(shape, dtype=cols.dtype)
        for p in range(k):
            for q in range(k):
                out[:, :, p:p + oh, q:q + ow] += grads[..., p, q].transpose(0, 3, 1, 2)
        return out


class ConvWeightGradFirstImage(_Steps):
    def weight_grad(self, g):
        per_image = len(g) // self.input_shape[0]
        k = self.kernel_size[0]
        first = self.cols[:per_image].T @ g[:per_image]
        return first.reshape(self.in_channels, k, k, -1).transpose(0, 3, 1, 2)


class ConvWeightGradAveraged(_Steps):
    def weight_grad(self, g):
        return super().weight_grad(g) / self.input_shape[0]


class ConvWeightGradRawReshape(_Steps):
    def weight_grad(self, g):
        k = self.kernel_size[0]
        return (self.cols.T @ g).reshape(self.in_channels, self.out_channels, k, k)


class ConvBiasGradWrongAxes(_Steps):
    def bias_grad(self, grad_output, g):
        return grad_output.reshape(-1, self.out_channels).sum(axis=0)


class ConvBiasGradPositionsAveraged(_Steps):
    def bias_grad(self, grad_output, g):
        return grad_output.mean(axis=(2, 3)).sum(axis=0)


class ConvColumnsOrder(_Steps):
    def rows(self, padded):
        cols = super().rows(padded)
        k2 = self.kernel_size[0] * self.kernel_size[1]
        return cols.reshape(len(cols), self.in_channels, k2).transpose(0, 2, 1).reshape(len(cols), -1)

    def weight_grad(self, g):
        k = self.kernel_size[0]
        return (self.cols.T @ g).reshape(self.in_channels, k, k, -1).transpose(0, 3, 1, 2)

    def scatter(self, cols, shape):
        k2 = self.kernel_size[0] * self.kernel_size[1]
        back = cols.reshape(len(cols), k2, self.in_channels).transpose(0, 2, 1)
        return super().scatter(back.reshape(len(cols), -1), shape)


class ConvWeightReshapedRaw(_Steps):
    def matrix(self):
        return self.weight.data.reshape(-1, self.out_channels)


class ConvChannelsNotMoved(_Steps):
    def shaped(self, y, n, oh, ow):
        return y.reshape(n, self.out_channels, oh, ow)


class ConvCol2imOverwrites(_Steps):
    def scatter(self, cols, shape):
        positions = np.arange(int(np.prod(shape))).reshape(shape)
        index = nn.im2col(positions, self.kernel_size, self.stride)
        out = np.zeros(int(np.prod(shape)), dtype=cols.dtype)
        out[index] += cols
        return out.reshape(shape)


class ConvGradsAssigned(_Steps):
    def add_grads(self, grad_output, g):
        self.weight.grad[...] = self.weight_grad(g)
        if self.bias is not None:
            self.bias.grad[...] = self.bias_grad(grad_output, g)


class ConvChannelsLast(_Steps):
    """Output (N, OH, OW, O), and a backward that takes its gradient in that layout."""

    def shaped(self, y, n, oh, ow):
        return y.reshape(n, oh, ow, self.out_channels)

    def backward(self, grad_output):
        return super().backward(np.asarray(grad_output).transpose(0, 3, 1, 2))


class ConvSqueezed(_Steps):
    def shaped(self, y, n, oh, ow):
        return np.squeeze(super().shaped(y, n, oh, ow))


class ConvWeightTorchLayout(_Steps):
    """The weight in PyTorch's (O, C, k, k) layout, used consistently."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.weight = nn.Parameter(self.weight.data.transpose(1, 0, 2, 3).copy())

    def matrix(self):
        return self.weight.data.reshape(self.out_channels, -1).T

    def weight_grad(self, g):
        return (self.cols.T @ g).T.reshape(self.weight.data.shape)


class ConvBiasOnLastAxis(_Steps):
    """The bias added after the output is laid out (N, O, OH, OW): it broadcasts on OW."""

    def forward(self, x):
        y = super().forward(x)
        return y if self.bias is None else y - self.bias.data[:, None, None] + self.bias.data


class ConvOutputFloat64(_Steps):
    def forward(self, x):
        return super().forward(x).astype(np.float64)


class ConvInputGradFloat64(_Steps):
    def scatter(self, cols, shape):
        return super().scatter(cols, shape).astype(np.float64)


class ConvFloat32Columns(_Steps):
    def rows(self, padded):
        return super().rows(padded).astype(np.float32)


class ConvWithoutBias(_Steps):
    def forward(self, x):
        y = super().forward(x)
        return y if self.bias is None else y - self.bias.data[:, None, None]


class _Drawn(_Steps):
    """Conv2d whose parameters come from ``draw(rng, bound)`` (weight, bias), from the
    generator it is given; the reference's own draws use another one."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True,
                 rng=None, dtype=np.float64):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, bias,
                         np.random.default_rng(0), dtype)
        rng = np.random.default_rng() if rng is None else rng
        weight, bias_values = self.draw(rng, 1 / np.sqrt(in_channels * kernel_size ** 2))
        self.weight.data = weight.astype(dtype)
        if self.bias is not None:
            self.bias.data = bias_values.astype(dtype)

    def draw(self, rng, bound):
        shape = self.weight.data.shape
        return rng.uniform(-bound, bound, size=shape), rng.uniform(-bound, bound, size=shape[1])


class ConvInitBoundOverChannels(_Drawn):
    def draw(self, rng, bound):
        return super().draw(rng, 1 / np.sqrt(self.in_channels))


class ConvInitBiasFirst(_Drawn):
    def draw(self, rng, bound):
        bias = rng.uniform(-bound, bound, size=self.out_channels)
        return rng.uniform(-bound, bound, size=self.weight.data.shape), bias


class ConvInitDtypeIgnored(_Drawn):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.weight.data = self.weight.data.astype(np.float64)


# ---------------------------------------------------------------------------- functions
def _naive(x, weight, bias, stride, padding, flip=False, pads=None, window_step=None):
    """The naive loops, with one of their classic mistakes switched on."""
    n, c, h, w = x.shape
    _, o, k, _ = weight.shape
    before, after = pads or (padding, padding)
    padded = np.pad(x, ((0, 0), (0, 0), (before, after), (before, after)))
    oh, ow = (h + 2 * padding - k) // stride + 1, (w + 2 * padding - k) // stride + 1
    step = stride if window_step is None else window_step
    kernel = weight[:, :, ::-1, ::-1] if flip else weight
    y = np.zeros((n, o, oh, ow))
    for i in range(n):
        for f in range(o):
            for r in range(oh):
                for s in range(ow):
                    window = padded[i, :, r * step:r * step + k, s * step:s * step + k]
                    y[i, f, r, s] = np.sum(window * kernel[:, f]) + (0 if bias is None else bias[f])
    return y


def naive_kernel_flipped(x, weight, bias=None, stride=1, padding=0):
    return _naive(x, weight, bias, stride, padding, flip=True)


def naive_padded_on_one_side(x, weight, bias=None, stride=1, padding=0):
    return _naive(x, weight, bias, stride, padding, pads=(0, 2 * padding))


def naive_window_ignores_stride(x, weight, bias=None, stride=1, padding=0):
    return _naive(x, weight, bias, stride, padding, window_step=1)


def naive_without_bias(x, weight, bias=None, stride=1, padding=0):
    return _naive(x, weight, None, stride, padding)


def _windows(x, kernel_size, stride):
    view = sliding_window_view(x, (kernel_size, kernel_size), axis=(2, 3))
    return view[:, :, ::stride, ::stride]


def _laid_out(x, kernel_size, stride, axes, columns_first=False):
    """The windows transposed to ``axes``, one row per window (or one column)."""
    view = _windows(x, kernel_size, stride).transpose(axes)
    width = x.shape[1] * kernel_size * kernel_size
    return view.reshape(width, -1) if columns_first else view.reshape(-1, width)


def im2col_channels_last(x, kernel_size, stride=1):
    return _laid_out(x, kernel_size, stride, (0, 2, 3, 4, 5, 1))


def im2col_window_transposed(x, kernel_size, stride=1):
    return _laid_out(x, kernel_size, stride, (0, 2, 3, 1, 5, 4))


def im2col_batch_last(x, kernel_size, stride=1):
    return _laid_out(x, kernel_size, stride, (2, 3, 0, 1, 4, 5))


def im2col_unfold_layout(x, kernel_size, stride=1):
    return _laid_out(x, kernel_size, stride, (1, 4, 5, 0, 2, 3), columns_first=True)


def im2col_stride_ignored(x, kernel_size, stride=1):
    return _laid_out(x, kernel_size, 1, (0, 2, 3, 1, 4, 5))


def im2col_square_only(x, kernel_size, stride=1):
    n, c, h, _ = x.shape
    size = (h - kernel_size) // stride + 1       # the height's count used for the width too
    view = _windows(x, kernel_size, stride).transpose(0, 2, 3, 1, 4, 5)
    return view.reshape(n * size * size, c * kernel_size * kernel_size)


def col2im_fancy_add(cols, shape, kernel_size, stride=1):
    index = nn.im2col(np.arange(int(np.prod(shape))).reshape(shape), kernel_size, stride)
    out = np.zeros(int(np.prod(shape)))
    out[index] += cols
    return out.reshape(shape)


def col2im_stride_ignored(cols, shape, kernel_size, stride=1):
    n, c, h, w = shape
    k = kernel_size
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    blocks = cols.reshape(n, oh, ow, c, k, k)
    out = np.zeros(shape)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i:i + k, j:j + k] += blocks[:, i, j]
    return out


def col2im_size_without_plus_one(cols, shape, kernel_size, stride=1):
    n, c, h, w = shape
    k = kernel_size
    oh, ow = (h - k) // stride, (w - k) // stride        # the + 1 forgotten
    out = np.zeros(shape)
    view = sliding_window_view(out, (k, k), axis=(2, 3), writeable=True)[:, :, ::stride, ::stride]
    np.add.at(view, (slice(None),), cols.reshape(n, oh, ow, c, k, k).transpose(0, 3, 1, 2, 4, 5))
    return out


# ---------------------------------------------------------------------------- pooling
class _Routed(nn.MaxPool2d):
    """MaxPool2d whose backward loops over the windows and gives each window's gradient to
    the entries ``chosen`` picks (the right one: the first maximum, row by row)."""

    def forward(self, x):
        self.x = np.asarray(x)
        return super().forward(x)

    def chosen(self, window):
        flat = window.reshape(*window.shape[:2], -1)
        return (flat.argmax(axis=-1)[..., None] == np.arange(flat.shape[-1])).reshape(window.shape)

    def place(self, dx, rows, cols, values):
        dx[:, :, rows, cols] += values

    def backward(self, grad_output):
        (k, _), (s, _) = self.kernel_size, self.stride
        dx = np.zeros(self.x.shape)
        for i in range(grad_output.shape[2]):
            for j in range(grad_output.shape[3]):
                window = self.x[:, :, i * s:i * s + k, j * s:j * s + k]
                values = self.chosen(window) * grad_output[:, :, i, j, None, None]
                self.place(dx, slice(i * s, i * s + k), slice(j * s, j * s + k), values)
        return dx


class MaxPoolGradToEveryElement(_Routed):
    def chosen(self, window):
        return np.ones(window.shape, dtype=bool)


class MaxPoolGradToEveryTie(_Routed):
    def chosen(self, window):
        return window == window.max(axis=(-2, -1), keepdims=True)


class MaxPoolGradToLastMax(_Routed):
    def chosen(self, window):
        return super().chosen(window[..., ::-1, ::-1])[..., ::-1, ::-1]


class MaxPoolFirstMaxByColumns(_Routed):
    def chosen(self, window):
        return super().chosen(window.swapaxes(-1, -2)).swapaxes(-1, -2)


class MaxPoolOverlapsOverwrite(_Routed):
    def place(self, dx, rows, cols, values):
        target = dx[:, :, rows, cols]
        target[values != 0] = values[values != 0]


class MaxPoolAverages(nn.MaxPool2d):
    def forward(self, x):
        super().forward(x)
        (k, _), (s, _) = self.kernel_size, self.stride
        return _windows(np.asarray(x), k, s).mean(axis=(-2, -1))


class MaxPoolStrideIgnored(nn.MaxPool2d):
    def forward(self, x):
        k = self.kernel_size[0]
        return _windows(np.asarray(x), k, 1).max(axis=(-2, -1))


class _AvgSpread(nn.AvgPool2d):
    """AvgPool2d whose backward gives each window's share to its pixels, window by window."""

    def share(self, grad_output):
        k = self.kernel_size[0]
        return grad_output / (k * k)

    def backward(self, grad_output):
        (k, _), (s, _) = self.kernel_size, self.stride
        dx = np.zeros(self.input_shape)
        share = self.share(grad_output)
        for i in range(grad_output.shape[2]):
            for j in range(grad_output.shape[3]):
                self.place(dx[:, :, i * s:i * s + k, j * s:j * s + k], share[:, :, i, j, None, None])
        return dx

    def place(self, target, value):
        target += value


class AvgPoolBackwardNotDivided(_AvgSpread):
    def share(self, grad_output):
        return grad_output


class AvgPoolBackwardDividedByK(_AvgSpread):
    def share(self, grad_output):
        return grad_output / self.kernel_size[0]


class AvgPoolOverlapsOverwrite(_AvgSpread):
    def place(self, target, value):
        target[...] = value


UNFOLD_RAISES = ("a (C*k*k, N*OH*OW) matrix cannot multiply the filter matrix, so the "
                 "notebook's Conv2d built on it raises, and a layer that raises earns no point")
MUTANTS = [
    Mutant("conv_kernel_flipped", "Conv2d", ConvKernelFlipped, "kernel is flipped",
           "a true convolution: the filters rotated by 180 degrees"),
    Mutant("conv_padded_on_one_side", "Conv2d", ConvPaddedOnOneSide, "one side only",
           "np.pad(x, (0, 2p)): all the zeros after the image"),
    Mutant("conv_crop_from_corner", "Conv2d", ConvCropFromCorner, "top-left corner",
           "dL/dx cropped as grad[:, :, :H, :W]"),
    Mutant("conv_crop_p_to_minus_p", "Conv2d", ConvCropPToMinusP, "0:0",
           "dL/dx cropped as grad[:, :, p:-p, p:-p], empty when p = 0"),
    Mutant("conv_stride_ignored_in_backward", "Conv2d", ConvStrideIgnoredInBackward,
           "stride is ignored in backward", "col2im puts window (i, j) at (i, j)"),
    Mutant("conv_weight_grad_first_image", "Conv2d", ConvWeightGradFirstImage, "first image",
           "dL/dW from the first image's rows only, not summed over the batch"),
    Mutant("conv_weight_grad_averaged", "Conv2d", ConvWeightGradAveraged, "averaged over the batch",
           "dL/dW divided by N"),
    Mutant("conv_weight_grad_raw_reshape", "Conv2d", ConvWeightGradRawReshape, "wrong places",
           "(cols.T @ G).reshape(C, O, k, k)"),
    Mutant("conv_bias_grad_wrong_axes", "Conv2d", ConvBiasGradWrongAxes, "wrong entries",
           "dL/db = grad_output.reshape(-1, O).sum(axis=0)"),
    Mutant("conv_bias_grad_positions_averaged", "Conv2d", ConvBiasGradPositionsAveraged,
           "averaged over the OH*OW", "dL/db = grad_output.mean(axis=(2, 3)).sum(axis=0)"),
    Mutant("conv_im2col_columns_order", "Conv2d", ConvColumnsOrder, "different orders",
           "im2col columns (p, q, c), filter rows (c, p, q)"),
    Mutant("conv_weight_reshaped_raw", "Conv2d", ConvWeightReshapedRaw, "mixes up the filters",
           "filter matrix = weight.reshape(-1, O)"),
    Mutant("conv_channels_not_moved", "Conv2d", ConvChannelsNotMoved, "reshaped straight",
           "y.reshape(N, O, OH, OW) without the transpose"),
    Mutant("conv_channels_last", "Conv2d", ConvChannelsLast, "channels are last",
           "output (N, OH, OW, O), backward taking its gradient in that layout"),
    Mutant("conv_squeezed", "Conv2d", ConvSqueezed, "np.squeeze",
           "np.squeeze of the output: a batch of one loses its batch axis"),
    Mutant("conv_weight_torch_layout", "Conv2d", ConvWeightTorchLayout, "PyTorch's layout",
           "weight of shape (O, C, k, k), used consistently"),
    Mutant("conv_bias_on_last_axis", "Conv2d", ConvBiasOnLastAxis, "last axis",
           "the bias added to the (N, O, OH, OW) output, broadcast along OW"),
    Mutant("conv_col2im_overwrites", "Conv2d", ConvCol2imOverwrites, "np.add.at",
           "col2im with out[index] += cols",
           also=(("conv2d_stride", "windows of kernel 3 at stride 2 overlap too, and the "
                                   "overwriting scatter, written inside Conv2d, loses their sum "
                                   "there as well"),)),
    Mutant("conv_grads_assigned", "Conv2d", ConvGradsAssigned, "instead of `+=`",
           "weight.grad = ..., not +="),
    Mutant("conv_keeps_first_windows", "Conv2d", _keeping_first(_Steps, "cols"),
           "what the first forward saved", "self.cols saved at the first forward only"),
    Mutant("conv_output_float64", "Conv2d", ConvOutputFloat64, "stays in float32",
           "a float32 layer's output cast to float64"),
    Mutant("conv_input_grad_float64", "Conv2d", ConvInputGradFloat64, "stays in float32",
           "a float32 layer's dL/dx in float64"),
    Mutant("conv_float32_columns", "Conv2d", ConvFloat32Columns, "as float32 arithmetic does",
           "im2col's columns cast to float32 in a float64 layer"),
    Mutant("conv_init_bound_over_channels", "Conv2d", ConvInitBoundOverChannels,
           "fan-in of a filter is C*K*K", "U(+-1/sqrt(C)): the kernel's K*K left out"),
    Mutant("conv_init_bias_first", "Conv2d", ConvInitBiasFirst, "bias is drawn before",
           "the bias drawn from the rng before the weight"),
    Mutant("conv_init_dtype_ignored", "Conv2d", ConvInitDtypeIgnored, ".astype(dtype)",
           "the weight kept in float64 whatever the dtype"),
    Mutant("conv_without_bias", "Conv2d", ConvWithoutBias, "bias is missing",
           "forward forgets the bias"),
    Mutant("naive_kernel_flipped", "conv2d_naive", naive_kernel_flipped, "kernel is flipped",
           "the window times weight[:, o, ::-1, ::-1]"),
    Mutant("naive_padded_on_one_side", "conv2d_naive", naive_padded_on_one_side, "one side only",
           "2p zeros after the image"),
    Mutant("naive_window_ignores_stride", "conv2d_naive", naive_window_ignores_stride,
           "do not move by the stride", "window of output (r, s) at (r, s)"),
    Mutant("naive_without_bias", "conv2d_naive", naive_without_bias, "bias is missing",
           "no bias added"),
    Mutant("im2col_channels_last", "im2col", im2col_channels_last, "(kernel row, kernel column, "
           "channel) order", "columns (p, q, c)"),
    Mutant("im2col_window_transposed", "im2col", im2col_window_transposed, "each window is "
           "transposed", "columns (c, q, p)"),
    Mutant("im2col_batch_last", "im2col", im2col_batch_last, "batch axis must come first",
           "rows (i, j, n)"),
    Mutant("im2col_unfold_layout", "im2col", im2col_unfold_layout, "one column per window",
           "(C*k*k, N*OH*OW), PyTorch's unfold",
           also=tuple((cell, UNFOLD_RAISES) for cell in (
               "conv2d_forward", "conv2d_backward_input", "conv2d_backward_params",
               "conv2d_stride", "conv2d_padding"))),
    Mutant("im2col_stride_ignored", "im2col", im2col_stride_ignored, "every stride-th window",
           "a row for every window at stride 1",
           also=(("conv2d_stride", "with a row for every stride-1 window the notebook's Conv2d "
                                   "cannot reshape its product at stride 2: it raises, and a "
                                   "layer that raises earns no point"),)),
    Mutant("im2col_square_only", "im2col", im2col_square_only, "square",
           "OH used for both axes: right on square inputs only"),
    Mutant("col2im_size_without_plus_one", "col2im", col2im_size_without_plus_one, "+ 1",
           "the output size (H - k) // stride without its + 1: the reshape raises"),
    Mutant("col2im_fancy_add", "col2im", col2im_fancy_add, "np.add.at",
           "out[index] += cols loses repeated indices"),
    Mutant("col2im_stride_ignored", "col2im", col2im_stride_ignored, "stride is ignored",
           "row (n, i, j) goes back to (i, j)"),
    Mutant("maxpool_grad_to_every_element", "MaxPool2d", MaxPoolGradToEveryElement,
           "every element of the window", "the gradient copied to the whole window"),
    Mutant("maxpool_grad_to_every_tie", "MaxPool2d", MaxPoolGradToEveryTie,
           "equal to the window's maximum", "mask = window == window.max()"),
    Mutant("maxpool_grad_to_last_max", "MaxPool2d", MaxPoolGradToLastMax, "last maximum",
           "ties go to the last maximum"),
    Mutant("maxpool_first_max_by_columns", "MaxPool2d", MaxPoolFirstMaxByColumns,
           "column by column", "the first maximum scanning columns, where PyTorch picks another"),
    Mutant("maxpool_overlaps_overwrite", "MaxPool2d", MaxPoolOverlapsOverwrite, "not their sum",
           "overlapping windows' gradients assigned, not added"),
    Mutant("maxpool_averages", "MaxPool2d", MaxPoolAverages, "mean of each window",
           "forward averages the window"),
    Mutant("maxpool_stride_ignored", "MaxPool2d", MaxPoolStrideIgnored, "every window at stride 1",
           "forward with stride 1",
           also=(("maxpool2d_backward", "a forward that pools every stride-1 window saves no "
                                        "maxima for the windows asked for, so backward has "
                                        "nothing to route"),)),
    Mutant("maxpool_keeps_first_argmax", "MaxPool2d", _keeping_first(nn.MaxPool2d, "argmax"),
           "what the first forward saved", "the maxima's places saved at the first forward only"),
    Mutant("maxpool_backward_float64", "MaxPool2d", _backward_float64(nn.MaxPool2d),
           "stays in float32",
           "dL/dx of a float32 input in float64"),
    Mutant("avgpool_keeps_first_shape", "AvgPool2d", _keeping_first(nn.AvgPool2d, "input_shape"),
           "what the first forward saved", "the input's shape saved at the first forward only"),
    Mutant("avgpool_backward_float64", "AvgPool2d", _backward_float64(nn.AvgPool2d),
           "stays in float32",
           "dL/dx of a float32 input in float64"),
    Mutant("avgpool_backward_not_divided", "AvgPool2d", AvgPoolBackwardNotDivided,
           "k*k = ", "backward copies grad_output to every pixel"),
    Mutant("avgpool_backward_divided_by_k", "AvgPool2d", AvgPoolBackwardDividedByK, "divide by k*k",
           "backward divides by k"),
    Mutant("avgpool_overlaps_overwrite", "AvgPool2d", AvgPoolOverlapsOverwrite,
           "not the sum over all windows", "overlapping windows' shares assigned"),
]
