"""Checks of unit 13's functions: the naive convolution's loops, ``im2col`` and ``col2im``.

Each runs the student's function on batches with several channels, non-square images,
strides and paddings, and compares with the reference (``minitorch_ref``'s ``Conv2d``,
``im2col`` and ``col2im``); a wrong array is matched against the classic mistakes: a
flipped kernel, padding on one side, windows that ignore the stride, columns in another
order, overlaps that do not add up. im2col and col2im are also graded on what the Conv2d
cells' layers give them (their padded inputs, the rows their backward passes scatter), and
what they return there is kept (``autograder.verdicts``): a Conv2d cell forgives a layer that
is right on those answers, never asking the student's function again.
"""
from __future__ import annotations

import numpy as np

from autograder import verdicts
from autograder.checks._calls import kept_answer
from autograder.checks._conv_cases import (
    CASES, LARGE, PADDING_CASES, STRIDE_CASES, ConvCase, fancy_add, offsets_without_stride,
    reference_conv, rows, scatter_input, windows_input,
)
from autograder.checks._conv_signatures import conv_signatures, raised_hint, size_hints
from autograder.checks._conv_usage import expect_float32
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, transposed, when
from course.testing.failure import CheckFailure
from minitorch_ref import nn

NAIVE_CASES = (ConvCase(2, 3, 4, 5, 6, 3, seed=0), ConvCase(1, 1, 2, 4, 4, 2, seed=1, bias=False),
               ConvCase(2, 2, 3, 7, 5, 3, stride=2, padding=1, seed=2),
               ConvCase(1, 2, 2, 7, 9, 3, stride=2, seed=3),
               ConvCase(2, 2, 1, 3, 4, 3, padding=2, seed=4))


@check
def conv2d_naive_values(conv2d_naive):
    """conv2d_naive(x, weight, bias, stride, padding) against the reference Conv2d: several
    channels and filters, non-square images, bias=None, strides 1 and 2, padding 0 to 2."""
    for case in NAIVE_CASES:
        x, _ = case.inputs()
        weight, bias = case.filters()
        got = call(f"conv2d_naive(x {x.shape}, weight {weight.shape}, bias, stride={case.stride}, "
                   f"padding={case.padding})", conv2d_naive, x.copy(), weight.copy(),
                   None if bias is None else bias.copy(), stride=case.stride, padding=case.padding)
        expected = reference_conv(x, weight, bias, case.stride, case.padding)
        expect_close("conv2d_naive(x, weight, bias, stride, padding)", got, expected, str(case),
                     conv_signatures(x, weight, bias, case))


# ---------------------------------------------------------------------------- im2col
# The layer cells' cases whose input im2col (col2im) is also graded on, what it returns kept
# for them: the forward, stride and padding cells build on im2col, the dL/dx, stride and
# padding cells on col2im.
IM2COL_KEPT = CASES + (LARGE,) + STRIDE_CASES + PADDING_CASES
COL2IM_KEPT = CASES + STRIDE_CASES + PADDING_CASES
# (padded input shape, kernel, stride)
WINDOW_CASES = (((2, 3, 5, 6), 3, 1), ((1, 2, 6, 6), 2, 2), ((3, 1, 4, 5), 2, 1),
                ((2, 2, 7, 5), 3, 2))


def _reordered(cols: np.ndarray, shape: tuple[int, ...], kernel: int, stride: int,
               rows_axes: tuple[int, ...], cols_axes: tuple[int, ...]) -> np.ndarray:
    """The reference's rows laid out (n, i, j) x (c, p, q), permuted into other orders."""
    n, c, h, w = shape
    oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    blocks = cols.reshape(n, oh, ow, c, kernel, kernel)
    return blocks.transpose(*rows_axes, *cols_axes).reshape(cols.shape)


def _im2col_signatures(x: np.ndarray, kernel: int, stride: int) -> tuple[Signature, ...]:
    cols = nn.im2col(x, kernel, stride)

    def like(rows_axes, cols_axes):
        return lambda g, e: close(g, _reordered(cols, x.shape, kernel, stride, rows_axes,
                                                cols_axes)) and not close(g, e)
    stride_one = (len(x) * (x.shape[2] - kernel + 1) * (x.shape[3] - kernel + 1), cols.shape[1])
    return (
        when("pqc", lambda g, e: close(g, rows(x, kernel, stride, "pqc")),
             "the columns are in (kernel row, kernel column, channel) order. Order them "
             "(c, p, q), channel first, the order of a filter weight[:, o] flattened: move the "
             "channel axis just before the window's two axes."),
        when("window_transposed", like((0, 1, 2), (3, 5, 4)),
             "each window is transposed: its columns run (c, q, p). Keep the window's rows "
             "before its columns, (c, p, q)."),
        when("batch_last", like((1, 2, 0), (3, 4, 5)),
             "the rows are ordered (i, j, n): the batch axis must come first, rows (n, i, j), so "
             "that the rows of one image stay together."),
        transposed("the result is (C*k*k, N*OH*OW): one column per window, as PyTorch's unfold "
                   "returns it. The course's im2col has one row per window: (N*OH*OW, C*k*k)."),
        when("stride_ignored", lambda g, e: stride > 1 and np.shape(g) == stride_one,
             f"there is a row for every window at stride 1: keep every stride-th window "
             f"in both directions, [..., ::stride, ::stride] (stride={stride})."),
    )


def im2col_failed(im2col: object) -> bool:
    """Whether im2col's own cell failed on this submission (``autograder.verdicts``): a
    Conv2d cell then leaves a step that raised to that cell."""
    return verdicts.failed(im2col, im2col_rows.__name__)


def kept_windows(im2col: object, case: ConvCase) -> np.ndarray | None:
    """What the student's im2col returned to its own cell on the padded input of ``case``, a
    layer cell's (None where it raised): the windows that layer computes with."""
    return verdicts.kept(im2col, im2col_rows.__name__, case)


@check
def im2col_rows(im2col):
    """im2col(x, kernel_size, stride): one row per window, rows (n, i, j), columns (c, p, q),
    for several channels, non-square images, strides 1 and 2, and the padded inputs of the
    Conv2d cells (their excuses compute with what it returns there)."""
    expect_im2col(im2col)


def _asked(function: object, check: str, inputs: list[tuple]) -> list[np.ndarray | CheckFailure]:
    """``function`` on every input ``(what, args, case)``, the stride last, before any is
    judged: a layer case's answer kept for that case's cell."""
    return [kept_answer(check, case, what, function, *args[:-1], stride=args[-1])
            for what, args, case in inputs]


def _judged(answer: np.ndarray | CheckFailure, hint: str) -> np.ndarray:
    """``answer`` to compare, or its failure raised with ``hint``."""
    if isinstance(answer, CheckFailure):
        raise raised_hint(answer, hint) from None
    return answer


def expect_im2col(im2col) -> None:
    rng = np.random.default_rng(20)
    inputs = [(rng.standard_normal(shape), kernel, stride, None)
              for shape, kernel, stride in WINDOW_CASES]
    inputs += [(windows_input(case), case.kernel, case.stride, case) for case in IM2COL_KEPT]
    answers = _asked(im2col, im2col_rows.__name__, [
        (f"im2col(x of shape {x.shape}, {kernel}, stride={stride})", (x.copy(), kernel, stride),
         case) for x, kernel, stride, case in inputs])
    for (x, kernel, stride, _), answer in zip(inputs, answers):
        expect_close(f"im2col(x, {kernel}, stride={stride})",
                     _judged(answer, size_hints(*x.shape, kernel, stride)),
                     nn.im2col(x, kernel, stride), f"x of shape {x.shape}",
                     _im2col_signatures(x, kernel, stride))
    x = rng.standard_normal(WINDOW_CASES[0][0]).astype(np.float32)
    expect_float32("im2col(x, 3) of a float32 x", call("im2col", im2col, x, 3, stride=1),
                   "input")


# ---------------------------------------------------------------------------- col2im
def _col2im_signatures(cols: np.ndarray, shape: tuple[int, ...], kernel: int,
                       stride: int) -> tuple[Signature, ...]:
    signatures = (when("fancy_add", lambda g, e: close(g, fancy_add(cols, shape, kernel, stride)),
                       "where windows overlap only one of their values arrived: out[index] += "
                       "cols adds once per distinct index, however often it repeats. Use "
                       "np.add.at(out, index, cols), which adds every value."),)
    if stride > 1:
        signatures += (when("stride_ignored", lambda g, e: close(
            g, offsets_without_stride(cols, shape, kernel, stride)),
            f"the stride is ignored: row (n, i, j) goes back to the window at (i * stride, "
            f"j * stride), not at (i, j) (stride={stride})."),)
    return signatures


def _im2col_note(im2col: object, shape: tuple[int, ...], kernel: int, stride: int) -> str:
    """A line saying that the student's im2col is wrong on ``shape`` too, when it is."""
    x = np.random.default_rng(21).standard_normal(shape)
    try:
        got = as_array("im2col", call("im2col", im2col, x.copy(), kernel, stride=stride))
    except CheckFailure:
        return "\n  Note: your im2col fails on this input too; fix it first (its own check says how)."
    if close(got, nn.im2col(x, kernel, stride)):
        return ""
    return ("\n  Note: your im2col is wrong on this input too, and col2im built on it inherits "
            "its mistake; fix im2col first (its own check says how).")


def col2im_failed(col2im: object) -> bool:
    """Whether col2im's own cell failed on this submission (``autograder.verdicts``): a
    Conv2d cell then leaves a backward that raised to that cell."""
    return verdicts.failed(col2im, col2im_adds_overlaps.__name__)


def kept_scatter(col2im: object, case: ConvCase) -> np.ndarray | None:
    """What the student's col2im returned to its own cell on the rows a layer of ``case``
    scatters in its backward pass (None where it raised)."""
    return verdicts.kept(col2im, col2im_adds_overlaps.__name__, case)


@check
def col2im_adds_overlaps(col2im, im2col):
    """col2im(cols, shape, kernel_size, stride) adds each row back onto its window, overlaps
    added up (stride < kernel) and not (stride = kernel), against the reference; also on the
    rows the Conv2d cells' backward passes scatter (their excuses compute with what it
    returns there)."""
    rng = np.random.default_rng(22)
    inputs = [(rng.standard_normal(nn.im2col(np.zeros(shape), kernel, stride).shape), shape,
               kernel, stride, None) for shape, kernel, stride in WINDOW_CASES]
    inputs += [(*scatter_input(case), case.kernel, case.stride, case) for case in COL2IM_KEPT]
    answers = _asked(col2im, col2im_adds_overlaps.__name__, [
        (f"col2im(cols of shape {cols.shape}, {shape}, {kernel}, stride={stride})",
         (cols.copy(), shape, kernel, stride), case)
        for cols, shape, kernel, stride, case in inputs])
    for (cols, shape, kernel, stride, case), answer in zip(inputs, answers):
        try:
            expect_close(f"col2im(cols, {shape}, {kernel}, stride={stride})",
                         _judged(answer, size_hints(*shape, kernel, stride)),
                         nn.col2im(cols, shape, kernel, stride),
                         "random cols" if case is None else "the rows of a Conv2d's backward",
                         _col2im_signatures(cols, shape, kernel, stride))
        except CheckFailure as failure:
            note = "" if isinstance(answer, CheckFailure) else _im2col_note(im2col, shape,
                                                                            kernel, stride)
            raise CheckFailure(str(failure) + note) from None
    shape, kernel, stride = WINDOW_CASES[0]
    cols = rng.standard_normal(nn.im2col(np.zeros(shape), kernel, stride).shape)
    expect_float32("col2im of float32 cols", call("col2im", col2im, cols.astype(np.float32),
                                                  shape, kernel, stride=stride), "cols")
