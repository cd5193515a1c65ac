"""Checks of the student's Conv2d: forward, dL/dx, dL/dW and dL/db, strides and padding.

The student's layer gets the reference twin's filters and both run on the same batches
(several channels, non-square images, a kernel as large as the input, values ~1000). A
wrong gradient is compared with finite differences of the student's own forward (is the
bug in forward or in backward?) and with the classic mistakes of an im2col convolution.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import method
from autograder.checks._conv_cases import (
    ConvCase, conv_as, fancy_add, filter_matrix, input_grad_as, offsets_without_stride, pad, rows,
)
from autograder.checks._fd import fd_verdict
from autograder.checks._modules import (
    batch_signatures, expect_accumulation, expect_forward, expect_input_grad, forward_pair, twins,
)
from autograder.checks.conv_functions import FLIPPED, conv_signatures
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, scaled, when
from course.testing.failure import CheckFailure
from minitorch_ref import nn as ref

PARAMS = ("weight", "bias")
CASES = (ConvCase(2, 3, 4, 5, 6, 3, seed=0), ConvCase(1, 1, 2, 4, 4, 2, seed=1),
         ConvCase(3, 2, 3, 6, 5, 3, seed=2, bias=False), ConvCase(2, 2, 1, 3, 3, 3, seed=3))
LARGE = ConvCase(2, 2, 2, 4, 4, 2, seed=4, scale=1e3)
STRIDE_CASES = (ConvCase(2, 2, 3, 7, 5, 3, stride=2, seed=5), ConvCase(1, 3, 2, 9, 9, 3, stride=3, seed=6),
                ConvCase(2, 2, 2, 6, 8, 2, stride=2, seed=7),
                ConvCase(2, 1, 2, 5, 7, 3, stride=2, padding=1, seed=8))
PADDING_CASES = (ConvCase(2, 2, 3, 5, 6, 3, padding=1, seed=9), ConvCase(1, 3, 2, 4, 4, 3, padding=2, seed=10),
                 ConvCase(2, 1, 2, 2, 3, 3, padding=1, seed=11))


def _layers(Conv2d, cases: tuple[ConvCase, ...]):
    """For each case: the case, the student's layer and its twin (same filters), x and dL/dy."""
    for case in cases:
        args, kwargs = case.layer_args
        student, reference = twins("Conv2d", Conv2d, ref.Conv2d, *args, params=PARAMS,
                                   seed=case.seed, **kwargs)
        x, grad_output = case.inputs()
        yield case, student, reference, x, grad_output


def _filters(reference) -> tuple[np.ndarray, np.ndarray | None]:
    return reference.weight.data, None if reference.bias is None else reference.bias.data


# ---------------------------------------------------------------------------- forward
def _forward_signatures(x: np.ndarray, reference, case: ConvCase) -> tuple[Signature, ...]:
    """conv_signatures, and the mistakes of the im2col layout."""
    weight, bias = _filters(reference)
    s, p = case.stride, case.padding

    def layout(**wrong):
        return lambda g, e: close(g, conv_as(x, weight, bias, s, (p, p), **wrong))
    order = ("im2col's columns and the rows of the filter matrix are in different orders. "
             "Flatten each filter in im2col's column order (c, p, q): "
             "weight.transpose(0, 2, 3, 1).reshape(-1, out_channels), of shape (C*k*k, O).")
    shapes = [when("unpadded", lambda g, e: p > 0 and np.shape(g) == (
        *e.shape[:2], *(n - 2 * p for n in e.shape[2:])),
        f"the output has the shape of a convolution without padding: pad x with {p} rows and "
        f"columns of zeros on each side before im2col.")]
    if s > 1:
        one = (len(x), case.out_channels, *(n + 2 * p - case.kernel + 1 for n in x.shape[2:]))
        shapes.append(when("stride_ignored", lambda g, e: np.shape(g) == one,
                           f"the output has the shape of a stride-1 convolution: take every "
                           f"stride-th window (stride={s}) in im2col, [..., ::stride, ::stride]."))
    return conv_signatures(x, weight, bias, case) + tuple(shapes) + (
        when("columns_order", layout(rows_order="pqc"), order),
        when("filters_order", layout(filters_order="pqc"), order),
        when("raw_filters", layout(filters_order="raw"),
             "weight.reshape(-1, out_channels) mixes up the filters: the weight is (C, O, k, k), "
             "so move the out_channels axis last first, weight.transpose(0, 2, 3, 1)."),
        when("channels_not_moved", layout(channels_moved=False),
             "the (N*OH*OW, O) product was reshaped straight to (N, O, OH, OW). Its rows are "
             "(n, i, j): reshape to (N, OH, OW, O), then move the channels, .transpose(0, 3, 1, 2)."),
    )


def _expect_forwards(Conv2d, cases: tuple[ConvCase, ...]) -> None:
    for case, student, reference, x, _ in _layers(Conv2d, cases):
        expect_forward("Conv2d", student, reference, x, case,
                       _forward_signatures(x, reference, case))


@check
def conv2d_forward(Conv2d):
    """Conv2d.forward against the reference (stride 1, no padding): several channels and
    filters, non-square images, a kernel as large as the input, bias=False, values ~1000."""
    _expect_forwards(Conv2d, CASES + (LARGE,))


# ---------------------------------------------------------------------------- dL/dx
def _input_signatures(x: np.ndarray, reference, grad_output: np.ndarray,
                      case: ConvCase) -> tuple[Signature, ...]:
    weight, s, p = reference.weight.data, case.stride, case.padding

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
    return tuple(signatures)


def _expect_input_grads(Conv2d, cases: tuple[ConvCase, ...]) -> None:
    for case, student, reference, x, grad_output in _layers(Conv2d, cases):
        expect_input_grad("Conv2d", student, reference, x, grad_output, case,
                          _input_signatures(x, reference, grad_output, case))


@check
def conv2d_backward_input(Conv2d):
    """dL/dx = col2im(G @ W.T), returned by backward: overlapping windows add up."""
    _expect_input_grads(Conv2d, CASES)


# ---------------------------------------------------------------------------- dL/dW, dL/db
def _weight_grad(x: np.ndarray, grad_output: np.ndarray, case: ConvCase) -> np.ndarray:
    """dL/dW = im2col(x).T @ G, laid out (C, O, k, k)."""
    g = grad_output.transpose(0, 2, 3, 1).reshape(-1, case.out_channels)
    matrix = rows(pad(x, case.padding, case.padding), case.kernel, case.stride).T @ g
    k = case.kernel
    return matrix.reshape(case.in_channels, k, k, -1).transpose(0, 3, 1, 2)


def _weight_signatures(x: np.ndarray, grad_output: np.ndarray,
                       case: ConvCase) -> tuple[Signature, ...]:
    matrix = filter_matrix(_weight_grad(x, grad_output, case))     # (C*k*k, O), (c, p, q)
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
            g, _weight_grad(x[:1], grad_output[:1], case)),
            "dL/dW holds the first image's contribution only: the filters are shared by every "
            "image of the batch, so dL/dW sums over all of them (every row of im2col(x))."))
    return tuple(signatures) + batch_signatures(len(x), "dL/dW")


def _bias_signatures(grad_output: np.ndarray) -> tuple[Signature, ...]:
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


def _fd_weight_verdict(student, x: np.ndarray, grad_output: np.ndarray, got: np.ndarray) -> str:
    """Whether the student's dL/dW agrees with finite differences of their own forward (each
    weight moved in the student's layer, which gets its own values back afterwards)."""
    param = call("Conv2d.weight", getattr, student, "weight")
    original = as_array("Conv2d.weight.data", call("Conv2d.weight.data", getattr, param, "data"))
    probe = original.copy()

    def loss() -> float:
        param.data = probe.copy()
        return float((asarray(student.forward(x.copy()), dtype=float) * grad_output).sum())
    try:
        return fd_verdict(loss, probe, got, "Your dL/dW", ", so the bug is in Conv2d.forward.",
                          ": Conv2d.backward's dL/dW itself is wrong.")
    finally:
        call("restoring Conv2d.weight.data", setattr, param, "data", original)


def _expect_param_grads(Conv2d, cases: tuple[ConvCase, ...]) -> None:
    for case, student, reference, x, grad_output in _layers(Conv2d, cases):
        forward_pair("Conv2d", student, reference, x)
        call("Conv2d.backward", method(student, "backward"), grad_output.copy())
        reference.backward(grad_output.copy())
        got = as_array("Conv2d.weight.grad (dL/dW)", getattr(student.weight, "grad", None))
        try:
            expect_close("Conv2d.weight.grad (dL/dW)", got, reference.weight.grad, str(case),
                         _weight_signatures(x, grad_output, case))
        except CheckFailure as failure:
            verdict = _fd_weight_verdict(student, x, grad_output, got)
            raise CheckFailure(str(failure) + verdict) from None
        if reference.bias is not None:
            expect_close("Conv2d.bias.grad (dL/db)", getattr(student.bias, "grad", None),
                         reference.bias.grad, str(case), _bias_signatures(grad_output))


@check
def conv2d_backward_params(Conv2d):
    """dL/dW = im2col(x).T @ G laid out (C, O, k, k), dL/db summed over the batch and the
    positions, added into .grad (two backward passes add up)."""
    _expect_param_grads(Conv2d, CASES)
    case, student, reference, x, grad_output = next(_layers(Conv2d, CASES[:1]))
    expect_accumulation("Conv2d", student, reference, x, grad_output, PARAMS)


@check
def conv2d_stride(Conv2d):
    """Strides 2 and 3 (windows that overlap, touch, or skip pixels), with and without
    padding: forward, dL/dx and dL/dW."""
    _expect_forwards(Conv2d, STRIDE_CASES)
    _expect_input_grads(Conv2d, STRIDE_CASES)
    _expect_param_grads(Conv2d, STRIDE_CASES)


@check
def conv2d_padding(Conv2d):
    """Padding 1 and 2, also on an input smaller than the kernel: forward, dL/dx (the padded
    gradient cropped back to the input) and dL/dW."""
    _expect_forwards(Conv2d, PADDING_CASES)
    _expect_input_grads(Conv2d, PADDING_CASES)
    _expect_param_grads(Conv2d, PADDING_CASES)
