"""Checks of the student's MaxPool2d and AvgPool2d: forward and backward against the reference.

Windows side by side, overlapping and rectangular images; for max-pooling also inputs full
of ties (small integers, and the all-zero windows a ReLU leaves), where the gradient must go
to one maximum per window, the first one row by row, as PyTorch sends it. A wrong gradient is
matched against the other ways of routing it (to every element, to every tied maximum, to the
last one, column by column, overlapping windows that overwrite instead of adding).
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import numpy as np

from autograder.checks._calls import method, placed
from autograder.checks._conv_runs import attempt
from autograder.checks._conv_usage import expect_float32, expect_latest
from autograder.checks._modules import expect_input_grad, forward_pair
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call, construct
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, scaled, when
from course.testing.failure import CheckFailure
from minitorch_ref import nn as ref
from minitorch_ref.nn.im2col import add_windows, windows

# (input shape, kernel, stride): side by side, overlapping, kernel 3 with stride 3
POOL_CASES = (((2, 3, 4, 6), 2, None), ((1, 2, 5, 5), 3, 1), ((2, 1, 6, 4), 2, 1),
              ((1, 2, 6, 9), 3, 3))


class PoolCase:
    """One pooling: its input and upstream gradient, and how it reads in a message."""

    def __init__(self, shape: tuple[int, ...], kernel: int, stride: int | None, x: np.ndarray,
                 grad_output: np.ndarray, values: str) -> None:
        self.shape, self.kernel, self.stride_arg = shape, kernel, stride
        self.stride = stride or kernel
        self.x, self.grad_output, self.values = x, grad_output, values

    def __str__(self) -> str:
        stride = "" if self.stride_arg is None else f", stride={self.stride}"
        return f"input of shape {self.shape} ({self.values}), kernel_size={self.kernel}{stride}"


def _cases(kind: str, seed: int) -> list[PoolCase]:
    """Each of POOL_CASES with ``normal`` values, or with ``ties`` (integers 0-2, and one
    channel all zeros, as after a ReLU)."""
    rng = np.random.default_rng(seed)
    cases = []
    for shape, kernel, stride in POOL_CASES:
        if kind == "ties":
            x = rng.integers(0, 3, shape).astype(float)
            x[:, -1] = 0.0
        else:
            x = rng.standard_normal(shape)
        out = ref.MaxPool2d(kernel, stride)(x).shape
        cases.append(PoolCase(shape, kernel, stride, x, rng.standard_normal(out),
                              "ties: small integers, a channel of zeros" if kind == "ties"
                              else "random normal"))
    return cases


@contextlib.contextmanager
def told(name: str, case: PoolCase) -> Iterator[None]:
    """A failure of the block names the layer and the input the check used; a forward that
    raised because its windows moved by the kernel size is told the stride was ignored."""
    try:
        yield
    except CheckFailure as failure:
        built = f"{name}({case.kernel}" + ("" if case.stride_arg is None
                                           else f", stride={case.stride_arg}") + ")"
        note = f"\n  The check built {built} and gave it x of shape {case.shape}."
        if case.stride != case.kernel and f"/ {case.kernel} + 1 is not an integer" in str(failure):
            note += (f"\n  Likely mistake: the stride argument is ignored: your layer moves its "
                     f"windows by {case.kernel}, the kernel size, not by stride={case.stride}. "
                     "Keep the stride it is given: self.stride = kernel_size if stride is None "
                     "else stride.")
        raise CheckFailure(str(failure) + note) from None


def _pair(Pool: type, reference_cls: type, case: PoolCase):
    name = reference_cls.__name__
    if case.stride_arg is None:     # the default stride, the kernel size
        student = construct(Pool, case.kernel)
    else:
        student = construct(Pool, case.kernel, stride=case.stride_arg)
    check_instance(name, student)
    return student, reference_cls(case.kernel, case.stride_arg)


# ---------------------------------------------------------------------------- how it is used
def _float32_forward(name: str, Pool: type, reference_cls: type, case: PoolCase) -> tuple:
    """The student's layer and its output on a float32 input (None where it failed)."""
    student, _ = _pair(Pool, reference_cls, case)
    y, _ = attempt(f"{name}.forward output", student.forward,
                   placed(case.x.astype(np.float32), student)[0])
    return student, y


def _float32_pass(name: str, Pool: type, reference_cls: type, case: PoolCase) -> tuple:
    """The output and dL/dx of the student's layer on float32 inputs (None where it failed)."""
    student, y = _float32_forward(name, Pool, reference_cls, case)
    dx, _ = attempt(f"{name}.backward return value (dL/dx)", method(student, "backward"),
                    case.grad_output.astype(np.float32))
    return y, dx


def _expect_latest(name: str, Pool: type, reference_cls: type, case: PoolCase,
                   resized: bool = False) -> None:
    """forward(x1) (another batch, of another size if ``resized``), forward(x), backward(G):
    dL/dx is the student's own for x alone."""
    x1 = np.concatenate([case.x] * 2) if resized else case.x[..., ::-1].copy()

    def input_grad(*inputs: np.ndarray) -> np.ndarray:
        student, _ = _pair(Pool, reference_cls, case)
        for given in inputs:
            call(f"{name}.forward", student.forward, placed(given, student)[0])
        return as_array(f"{name}.backward return value (dL/dx)",
                        call(f"{name}.backward", method(student, "backward"),
                             case.grad_output.copy()))
    expect_latest(f"{name}.backward's dL/dx", input_grad(x1, case.x), input_grad(case.x),
                  lambda: input_grad(x1))


# ---------------------------------------------------------------------------- routes
Picker = Callable[[np.ndarray], np.ndarray]


def _first(flat: np.ndarray) -> np.ndarray:
    return flat.argmax(axis=-1)[..., None] == np.arange(flat.shape[-1])


def _last(flat: np.ndarray) -> np.ndarray:
    last = flat.shape[-1] - 1 - flat[..., ::-1].argmax(axis=-1)
    return last[..., None] == np.arange(flat.shape[-1])


def _column_first(flat: np.ndarray) -> np.ndarray:
    k = int(round(np.sqrt(flat.shape[-1])))
    by_columns = flat.reshape(*flat.shape[:-1], k, k).swapaxes(-1, -2).reshape(flat.shape)
    chosen = _first(by_columns)
    return chosen.reshape(*flat.shape[:-1], k, k).swapaxes(-1, -2).reshape(flat.shape)


def _ties(flat: np.ndarray) -> np.ndarray:
    return flat == flat.max(axis=-1, keepdims=True)


def _every(flat: np.ndarray) -> np.ndarray:
    return np.ones(flat.shape, dtype=bool)


def routed(case: PoolCase, pick: Picker) -> np.ndarray:
    """dL/dx with each window's gradient sent to the entries ``pick`` chooses, added up."""
    k, s = case.kernel, case.stride
    flat = windows(case.x, (k, k), (s, s)).reshape(*case.grad_output.shape, k * k)
    grads = pick(flat) * case.grad_output[..., None]
    return add_windows(np.moveaxis(grads, -1, 0).reshape(k, k, *grads.shape[:-1]), case.shape,
                       (s, s))


def overwritten(case: PoolCase) -> np.ndarray:
    """dL/dx with each window's gradient *assigned* to its first maximum: where windows
    overlap, the last one written wins instead of the sum."""
    k, s = case.kernel, case.stride
    flat_index = windows(np.arange(case.x.size).reshape(case.shape), (k, k), (s, s))
    flat_index = flat_index.reshape(*case.grad_output.shape, k * k)
    winner = windows(case.x, (k, k), (s, s)).reshape(flat_index.shape).argmax(axis=-1)
    out = np.zeros(case.x.size)
    out[np.take_along_axis(flat_index, winner[..., None], -1)[..., 0]] = case.grad_output
    return out.reshape(case.shape)


ROUTES = (
    ("every_element", _every, "the gradient is sent to every element of the window; only the "
     "maximum influenced the output, so only it receives the window's gradient."),
    ("every_tie", _ties, "the gradient is sent to every element equal to the window's maximum "
     "(mask = window == window.max()); where a window has several maxima, as in a window of "
     "zeros after a ReLU, each would get a full copy. Send it to one: the first maximum, row by "
     "row (argmax of the flattened window), as PyTorch does."),
    ("last_max", _last, "ties go to the last maximum of the window; PyTorch, and the course, "
     "send the gradient to the first one, row by row: argmax of the flattened window."),
    ("column_first", _column_first, "ties go to the first maximum column by column; PyTorch "
     "scans the window row by row: flatten it as (p, q), argmax of window.reshape(..., k * k)."),
)


def _max_signatures(case: PoolCase) -> tuple[Signature, ...]:
    signatures = tuple(when(name, lambda g, e, p=pick: close(g, routed(case, p))
                            and not close(g, e), text) for name, pick, text in ROUTES)
    return signatures + (when(
        "overwritten", lambda g, e: close(g, overwritten(case)) and not close(g, e),
        "where windows overlap, a pixel that is the maximum of several windows got one of their "
        "gradients, not their sum: dx[index] = ... (or +=) with repeated indices writes once. "
        "Use np.add.at, or col2im."),)


# ---------------------------------------------------------------------------- MaxPool2d
def _forward_signatures(case: PoolCase) -> tuple[Signature, ...]:
    k, s = case.kernel, case.stride
    view = windows(case.x, (k, k), (s, s))
    one = (*case.shape[:2], *(n - k + 1 for n in case.shape[2:]))
    return (
        when("mean", lambda g, e: close(g, view.mean(axis=(-2, -1))),
             "this is the mean of each window; MaxPool2d keeps its largest value."),
        when("stride_ignored", lambda g, e: s > 1 and np.shape(g) == one,
             f"the output has a value for every window at stride 1; the windows move by the "
             f"stride ({s}, by default the kernel size): keep every stride-th one."),
    )


@check
def maxpool2d_forward(MaxPool2d):
    """The largest value of each window: windows side by side (the default stride) and
    overlapping, non-square images, several channels."""
    for case in _cases("normal", 30):
        with told("MaxPool2d", case):
            student, reference = _pair(MaxPool2d, ref.MaxPool2d, case)
            got, expected = forward_pair("MaxPool2d", student, reference, case.x)
            expect_close("MaxPool2d.forward output", got, expected, str(case),
                         _forward_signatures(case))
    case = _cases("normal", 30)[1]
    with told("MaxPool2d", case):
        expect_float32("MaxPool2d.forward output", _float32_forward(
            "MaxPool2d", MaxPool2d, ref.MaxPool2d, case)[1], "input")


@check
def maxpool2d_backward(MaxPool2d):
    """dL/dx: each window's gradient goes to its maximum only, the first one row by row where
    several tie (as in PyTorch); overlapping windows add up."""
    for kind, fd in (("normal", True), ("ties", False)):
        for case in _cases(kind, 31):
            with told("MaxPool2d", case):
                student, reference = _pair(MaxPool2d, ref.MaxPool2d, case)
                expect_input_grad("MaxPool2d", student, reference, case.x, case.grad_output,
                                  case, _max_signatures(case), fd=fd)
    case = _cases("normal", 31)[1]
    with told("MaxPool2d", case):
        expect_float32("MaxPool2d.backward's dL/dx", _float32_pass(
            "MaxPool2d", MaxPool2d, ref.MaxPool2d, case)[1], "input and gradient")
        _expect_latest("MaxPool2d", MaxPool2d, ref.MaxPool2d, case)


# ---------------------------------------------------------------------------- AvgPool2d
def _avg_signatures(case: PoolCase) -> tuple[Signature, ...]:
    k = case.kernel
    return (
        scaled(k * k, f"the result is k*k = {k * k} times too large: the mean divides the "
               "window's sum by its k*k elements, and so does the backward pass.", "not_divided"),
        scaled(k, f"the result is k = {k} times too large: a k x k window has k*k elements, "
               "divide by k*k.", "divided_by_k"),
        when("overwritten", lambda g, e: close(g, routed_assigned(case)) and not close(g, e),
             "where windows overlap, a pixel got the gradient of one window, not the sum over "
             "all windows that contain it: add them (np.add.at, or col2im)."),
    )


def routed_assigned(case: PoolCase) -> np.ndarray:
    """AvgPool2d's dL/dx with each window's share assigned, not added, to its pixels."""
    k, s = case.kernel, case.stride
    index = windows(np.arange(case.x.size).reshape(case.shape), (k, k), (s, s))
    out = np.zeros(case.x.size)
    out[index] = (case.grad_output / (k * k))[..., None, None]
    return out.reshape(case.shape)


@check
def avgpool2d(AvgPool2d):
    """Forward: the mean of each window; backward: each pixel gets grad / (k*k) from every
    window that contains it. Side by side and overlapping windows."""
    for case in _cases("normal", 32):
        with told("AvgPool2d", case):
            student, reference = _pair(AvgPool2d, ref.AvgPool2d, case)
            got, expected = forward_pair("AvgPool2d", student, reference, case.x)
            expect_close("AvgPool2d.forward output", got, expected, str(case),
                         _avg_signatures(case))
            expect_input_grad("AvgPool2d", student, reference, case.x, case.grad_output, case,
                              _avg_signatures(case))
    case = _cases("normal", 32)[1]
    with told("AvgPool2d", case):
        for quantity, value in zip(("AvgPool2d.forward output", "AvgPool2d.backward's dL/dx"),
                                   _float32_pass("AvgPool2d", AvgPool2d, ref.AvgPool2d, case)):
            expect_float32(quantity, value, "input")
        _expect_latest("AvgPool2d", AvgPool2d, ref.AvgPool2d, case, resized=True)
