"""im2col and col2im: the windows of a batch of images as the rows of a matrix, and back.

A convolution applies the same small filter to every window of its input. ``im2col``
copies every window into one row of a matrix, so that the whole convolution becomes one
matrix product with the filters (``Conv2d``); ``col2im`` is its adjoint, which adds each
row back onto the window it came from (the backward pass, and pooling's). They are
PyTorch's ``F.unfold`` and ``F.fold`` in the course's row-vector layout:
``im2col(x, k, s) == F.unfold(x, k, stride=s).transpose(1, 2).reshape(-1, C * kH * kW)``.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Pair = tuple[int, int]


def pair(value: int | tuple[int, int], name: str = "size") -> Pair:
    """``3`` as ``(3, 3)``; a pair as it is; anything else is refused."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(values) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                   for v in values):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return int(values[0]), int(values[1])


def output_size(name: str, shape: Pair, kernel_size: Pair, stride: Pair,
                padding: Pair | None = None) -> Pair:
    """``(OH, OW)`` with ``O = (size + 2 * padding - kernel) / stride + 1`` per axis
    (``padding=None``: a layer without padding, such as pooling).

    Raises ValueError when a kernel is larger than the (padded) input, or when the stride
    does not reach its last row or column exactly (PyTorch floors and ignores them).
    """
    sizes = []
    for axis, size, k, s, p in zip(("height", "width"), shape, kernel_size, stride,
                                   padding or (0, 0)):
        padded = size + 2 * p
        where = f"{size}" if padding is None else f"{size} + 2*{p}"
        if k > padded:
            raise ValueError(
                f"{name}: kernel {axis} {k} is larger than the {_input(padding)}'s {axis} "
                f"{where}{'' if padding is None else f' = {padded}'}. Use a smaller kernel"
                f"{'' if padding is None else ' or more padding'}.")
        steps, rest = divmod(padded - k, s)
        if rest:
            lines = f"{'row' if axis == 'height' else 'column'}{'s' if rest > 1 else ''}"
            raise ValueError(
                f"{name}: the output {axis} ({where} - {k}) / {s} + 1 is not an integer: a "
                f"stride of {s} would skip the last {rest} {lines} of the {_input(padding)} "
                f"(PyTorch drops them silently). Change the "
                f"{'size of the input' if padding is None else 'padding'}, the kernel size or "
                "the stride so that the windows tile the input exactly.")
        sizes.append(steps + 1)
    return sizes[0], sizes[1]


def _input(padding: Pair | None) -> str:
    return "input" if padding is None else "padded input"


def windows(x: np.ndarray, kernel_size: Pair, stride: Pair, axes: Pair = (2, 3)) -> np.ndarray:
    """Every window of ``x`` along ``axes`` (height, width), a view without a copy: for images
    ``(N, C, H, W)``, ``(N, C, OH, OW, kH, kW)``; the window's axes come last."""
    index = [slice(None)] * x.ndim
    for axis, step in zip(axes, stride):
        index[axis] = slice(None, None, step)
    return sliding_window_view(x, kernel_size, axis=axes)[tuple(index)]


def add_windows(grads: np.ndarray, shape: tuple[int, ...], stride: Pair,
                axes: Pair = (2, 3)) -> np.ndarray:
    """The adjoint of ``windows``: an array of ``shape`` holding at each pixel the sum of the
    entries of ``grads`` for every window that covers it. ``grads`` has the kernel offsets
    first, ``(kH, kW, ...)``, then the windows' positions in the layout of ``shape`` (``OH``,
    ``OW`` at ``axes``). One vectorised addition per offset ``(p, q)``."""
    out = np.zeros(shape, dtype=grads.dtype)
    kh, kw = grads.shape[:2]
    index = [slice(None)] * len(shape)
    for p in range(kh):
        for q in range(kw):
            for axis, offset, step in zip(axes, (p, q), stride):
                count = grads.shape[2 + axis]
                index[axis] = slice(offset, offset + step * (count - 1) + 1, step)
            out[tuple(index)] += grads[p, q]
    return out


def im2col(x: np.ndarray, kernel_size: int | Pair, stride: int | Pair = 1) -> np.ndarray:
    """The windows of ``x`` (N, C, H, W) as rows: ``(N*OH*OW, C*kH*kW)``.

    Row ``(n, i, j)`` (in that order) holds the window at output position ``(i, j)`` of
    image ``n``, its columns ordered ``(c, p, q)``: channel, then kernel row and column, the
    order of a filter ``weight[:, o]`` flattened. ``x`` is already padded.
    """
    n, c = x.shape[:2]
    kh, kw = kernel_size = pair(kernel_size, "kernel_size")
    view = windows(x, kernel_size, pair(stride, "stride"))
    oh, ow = view.shape[2:4]
    return view.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)


def col2im(cols: np.ndarray, shape: tuple[int, ...], kernel_size: int | Pair,
           stride: int | Pair = 1) -> np.ndarray:
    """The adjoint of ``im2col``: each row of ``cols`` (N*OH*OW, C*kH*kW) added back onto the
    window it came from, in an array of ``shape`` (N, C, H, W); overlaps add up."""
    n, c, h, w = shape
    (kh, kw), stride = pair(kernel_size, "kernel_size"), pair(stride, "stride")
    oh, ow = (h - kh) // stride[0] + 1, (w - kw) // stride[1] + 1
    grads = cols.reshape(n, oh, ow, c, kh, kw).transpose(4, 5, 0, 3, 1, 2)
    return add_windows(grads, shape, stride)
