"""The classic mistakes of a convolution, as signatures a wrong array is matched against: a
flipped kernel, padding on one side, windows that ignore the stride, im2col's columns and the
filter matrix in different orders, gradients averaged or not summed, overlaps lost.

Each is computed the way a student's code computes it (``_conv_cases``), in the course's
layout: images ``(N, C, H, W)``, filters ``(C, O, k, k)``.
"""
from __future__ import annotations

import re

import numpy as np

from autograder.checks._conv_cases import (
    ConvCase, conv_as, fancy_add, filter_matrix, input_grad_as, offsets_without_stride, pad,
    reference_conv, rows,
)
from autograder.checks._conv_layouts import layout_signatures
from autograder.checks._modules import batch_signatures
from course.testing.diagnose import Signature, close, scaled, when
from course.testing.failure import CheckFailure

FLIPPED = ("the kernel is flipped: that is the convolution of signal processing. A "
           "convolutional layer computes a cross-correlation, y[i, j] = sum over c, p, q of "
           "x[c, i*stride + p, j*stride + q] * W[c, o, p, q], without flipping W.")
ORDER = ("im2col's columns and the rows of the filter matrix are in different orders. "
         "Flatten each filter in im2col's column order (c, p, q): "
         "weight.transpose(0, 2, 3, 1).reshape(-1, out_channels), of shape (C*k*k, O).")


def one_side(p: int) -> str:
    return (f"the padding is applied to one side only: the {2 * p} rows and columns of zeros "
            f"are all after the image. Pad each side with {p}: np.pad(x, ((0, 0), (0, 0), "
            f"({p}, {p}), ({p}, {p}))).")


def conv_signatures(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                    case: ConvCase) -> tuple[Signature, ...]:
    """A wrong convolution output: a flipped kernel, no bias, padding on one side, windows
    that do not move by the stride."""
    s, p = case.stride, case.padding
    signatures = [when("flipped", lambda g, e: close(g, reference_conv(
        x, weight[:, :, ::-1, ::-1], bias, s, p)), FLIPPED)]
    if bias is not None:
        signatures.append(when("no_bias", lambda g, e: close(g + bias[:, None, None], e),
                               "the bias is missing: add bias[o] to every output of filter o."))
        signatures.append(when("bias_last_axis", lambda g, e: e.shape[-1] == len(bias) and close(
            g, e - bias[:, None, None] + bias) and not close(g, e), bias_axis_hint(case)[
                case.out_shape]))
    if p:
        signatures.append(when("one_side", lambda g, e: close(
            g, conv_as(x, weight, bias, s, (0, 2 * p))), one_side(p)))
    if s > 1:
        signatures.append(when("window_stride", lambda g, e: close(
            g, reference_conv(x, weight, bias, 1, p)[:, :, :e.shape[2], :e.shape[3]]),
            f"the windows do not move by the stride: the window of output (i, j) starts at row "
            f"i * stride and column j * stride of the padded input (stride={s}), not at (i, j)."))
    return tuple(signatures)


def _shape_signatures(x: np.ndarray, case: ConvCase) -> list[Signature]:
    s, p = case.stride, case.padding
    shapes = [when("unpadded", lambda g, e: p > 0 and np.shape(g) == (
        *e.shape[:2], *(n - 2 * p for n in e.shape[2:])),
        f"the output has the shape of a convolution without padding: pad x with {p} rows and "
        f"columns of zeros on each side before im2col.")]
    if s > 1:
        one = (len(x), case.out_channels, *(n + 2 * p - case.kernel + 1 for n in x.shape[2:]))
        shapes.append(when("stride_ignored", lambda g, e: np.shape(g) == one,
                           f"the output has the shape of a stride-1 convolution: take every "
                           f"stride-th window (stride={s}) in im2col, [..., ::stride, ::stride]."))
    return shapes


def forward_signatures(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                       case: ConvCase) -> tuple[Signature, ...]:
    """conv_signatures, the shapes of a missing padding or stride, and the mistakes of the
    im2col layout."""
    s, p = case.stride, case.padding

    def layout(**wrong):
        return lambda g, e: close(g, conv_as(x, weight, bias, s, (p, p), **wrong))
    return conv_signatures(x, weight, bias, case) + layout_signatures() + tuple(
        _shape_signatures(x, case)) + (
        when("columns_order", layout(rows_order="pqc"), ORDER),
        when("filters_order", layout(filters_order="pqc"), ORDER),
        when("raw_filters", layout(filters_order="raw"),
             "weight.reshape(-1, out_channels) mixes up the filters: the weight is (C, O, k, k), "
             "so move the out_channels axis last first, weight.transpose(0, 2, 3, 1)."),
        when("channels_not_moved", layout(channels_moved=False),
             "the (N*OH*OW, O) product was reshaped straight to (N, O, OH, OW). Its rows are "
             "(n, i, j): reshape to (N, OH, OW, O), then move the channels, .transpose(0, 3, 1, 2)."),
    )


def input_signatures(x: np.ndarray, weight: np.ndarray, grad_output: np.ndarray,
                     case: ConvCase) -> tuple[Signature, ...]:
    """dL/dx with its overlaps lost, a flipped kernel, the crop from the corner, the stride
    ignored; and off by the batch size."""
    s, p = case.stride, case.padding

    def like(**wrong):
        return lambda g, e: close(g, input_grad_as(x.shape, wrong.pop("weight", weight),
                                                   grad_output, s, p, **wrong))
    signatures = [
        when("empty", lambda g, e: np.size(g) == 0 and np.size(e) > 0,
             "dL/dx is empty: with padding 0, grad[:, :, p:-p, p:-p] is grad[:, :, 0:0, 0:0]. "
             "Crop the padded gradient with p:p + H and p:p + W."),
        when("overlaps_lost", like(scatter=fancy_add),
             "where windows overlap only one of their gradients arrived: out[index] += values "
             "adds once per distinct index. col2im must add every value, np.add.at."),
        when("flipped", like(weight=weight[:, :, ::-1, ::-1]), FLIPPED),
    ]
    if p:
        signatures.append(when("crop_corner", like(corner=True),
                               f"the padded gradient is cropped from its top-left corner. The "
                               f"input sits in the middle of the padded image: crop "
                               f"[:, :, {p}:{p} + H, {p}:{p} + W], one padding off each side."))
    if s > 1:
        signatures.append(when("stride_ignored", like(scatter=offsets_without_stride),
                               f"the stride is ignored in backward: the gradient of window (i, j) "
                               f"goes back to the pixels from (i * stride, j * stride) on "
                               f"(stride={s}), in col2im as in im2col."))
    return tuple(signatures) + batch_signatures(len(x), "dL/dx")


def weight_grad(x: np.ndarray, grad_output: np.ndarray, case: ConvCase) -> np.ndarray:
    """dL/dW = im2col(x).T @ G, laid out (C, O, k, k)."""
    g = grad_output.transpose(0, 2, 3, 1).reshape(-1, case.out_channels)
    matrix = rows(pad(x, case.padding, case.padding), case.kernel, case.stride).T @ g
    k = case.kernel
    return matrix.reshape(case.in_channels, k, k, -1).transpose(0, 3, 1, 2)


def weight_signatures(x: np.ndarray, grad_output: np.ndarray,
                      case: ConvCase) -> tuple[Signature, ...]:
    """dL/dW reshaped without the transpose, flipped, averaged over the positions, from the
    first image only; and off by the batch size."""
    matrix = filter_matrix(weight_grad(x, grad_output, case))     # (C*k*k, O), (c, p, q)
    c, o, k = case.in_channels, case.out_channels, case.kernel
    positions = case.out_shape[2] * case.out_shape[3]
    signatures = [
        when("raw_reshape", lambda g, e: close(g, matrix.reshape(c, o, k, k)) and not close(g, e),
             "dL/dW has its values in the wrong places: the (C*k*k, O) matrix im2col(x).T @ G "
             "was reshaped straight to (C, O, k, k). Reshape it to (C, k, k, O), then move "
             "out_channels to axis 1, .transpose(0, 3, 1, 2)."),
        when("flipped", lambda g, e: close(g, e[:, :, ::-1, ::-1]) and not close(g, e), FLIPPED),
    ]
    if positions > 1:
        signatures.append(scaled(1 / positions, f"dL/dW is exactly 1/(OH*OW) = 1/{positions} of "
                                 "the expected value: it is averaged over the positions. A filter "
                                 "is used at every position, so its gradient sums over them."))
    if len(x) > 1:
        signatures.append(when("first_image", lambda g, e: close(
            g, weight_grad(x[:1], grad_output[:1], case)),
            "dL/dW holds the first image's contribution only: the filters are shared by every "
            "image of the batch, so dL/dW sums over all of them (every row of im2col(x))."))
    return tuple(signatures) + batch_signatures(len(x), "dL/dW")


def bias_signatures(grad_output: np.ndarray) -> tuple[Signature, ...]:
    """dL/db over the wrong entries, not summed, averaged over the positions; off by N."""
    n, o, oh, ow = grad_output.shape
    right = ("dL/db = grad_output.sum(axis=(0, 2, 3)): one value per filter, summed over the "
             "batch and every position.")
    signatures = (
        when("wrong_groups", lambda g, e: close(g, grad_output.reshape(-1, o).sum(axis=0))
             and not close(g, e),
             "dL/db sums the wrong entries: grad_output.reshape(-1, out_channels) without "
             f"moving the channel axis last mixes the channels. {right}"),
        when("not_summed", lambda g, e: np.shape(g) in ((o, oh, ow), (n, o)),
             f"dL/db was not summed over every axis but the channels. {right}"),
    )
    if oh * ow > 1:
        signatures += (scaled(1 / (oh * ow), f"dL/db is averaged over the OH*OW = {oh * ow} "
                              f"positions instead of summed. {right}", "positions_mean"),)
    return signatures + batch_signatures(n, "dL/db")


# ---------------------------------------------------------------------------- raised
SHAPE = re.compile(r"\((\d+(?:, ?\d+)*),?\)")


def raised_hint(failure: CheckFailure, hints: dict[tuple[int, ...], str]) -> CheckFailure:
    """``failure`` (the student's code raised) with the likely mistake when its message names
    one of the shapes of ``hints``, as numpy's reshape and broadcasting errors do: what the
    kernel said only explains, it decides nothing."""
    message = str(failure)
    named = {tuple(int(n) for n in found.split(",")) for found in SHAPE.findall(message)}
    for shape, hint in hints.items():
        if shape in named:
            return CheckFailure(f"{message}\n  Likely mistake: {hint}")
    return failure


def size_hints(n: int, c: int, h: int, w: int, kernel: int, stride: int) -> dict:
    """The shapes im2col and col2im reach with the output size's ``+ 1`` forgotten, or with
    the height's count of windows used for the width."""
    oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    plus_one = (f"the number of windows per axis is (size - kernel_size) // stride + 1 = "
                f"{oh} x {ow} here: the + 1 is missing (the first window is at 0).")
    hints = {(n, oh - 1, ow - 1, c, kernel, kernel): plus_one,
             (n * (oh - 1) * (ow - 1), c * kernel * kernel): plus_one}
    if oh != ow:
        square = (f"the windows are counted as OH x OH = {oh} x {oh}: right only on square "
                  f"inputs. This input is {h} x {w}: count OH from the height and OW from the "
                  "width (or take both from the sliding window view's shape).")
        hints[(n * oh * oh, c * kernel * kernel)] = hints[(n, oh, oh, c, kernel, kernel)] = square
    return hints


def bias_axis_hint(case: ConvCase) -> dict:
    """The bias ``(O,)`` added to the ``(N, O, OH, OW)`` output: numpy broadcasts it along OW."""
    return {case.out_shape: "the bias (O,) is added to the (N, O, OH, OW) output, so numpy "
            "lines it up with the last axis, OW. Add it to the (N*OH*OW, O) product before "
            "reshaping, or as bias[:, None, None]."}
