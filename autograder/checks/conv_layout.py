"""Checks of Conv2d's stride and padding, each judged on its own part.

A stride of s computes the stride-1 layer's outputs at every s-th position, and its gradients
are the stride-1 layer's for an upstream gradient with zeros at the skipped positions; padding
p is the unpadded layer applied to the padded input, with dL/dx cropped back. So when the
student's own stride-1 (unpadded) layer is wrong, a mistake its cells already cost, each
quantity here passes if it relates to that layer's as the right ones do (``Relation``); a
trivial base (zeros) explains nothing, and the reference decides. A step that raises, or
returns an empty dL/dx, is forgiven where the student's own base fails the same way (or the
student's im2col or col2im fails its own cell); a forward with another layout (channels last,
squeezed) is compared in the layout the base shows, and backward gets its gradient in that
layout (``_conv_layouts``, ``_conv_runs``).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from autograder.checks._conv_cases import PADDING_CASES, STRIDE_CASES, ConvCase, pad
from autograder.checks._conv_layouts import laid_out
from autograder.checks._conv_own import (
    Excuse, on_own_col2im, on_own_im2col, own_forward_gradient, passes,
)
from autograder.checks._conv_runs import Judged, Run, in_layout, one_pass, pair, param_grad
from autograder.checks._conv_signatures import (
    bias_axis_hint, forward_signatures, input_signatures, raised_hint, weight_signatures,
)
from autograder import verdicts
from autograder.checks.conv import (
    conv2d_backward_input, conv2d_backward_params, conv2d_forward, filters, forward_loss,
    forward_wrong, verdict,
)
from autograder.checks.conv_init import conv2d_init
from autograder.checks.conv_functions import col2im_failed, im2col_failed
from autograder.registry import check
from course.testing._trusted import asarray
from course.testing.compare import expect_close
from course.testing.diagnose import close, finite
from course.testing.failure import CheckFailure, fail

Transform = Callable[[ConvCase, np.ndarray], np.ndarray]
# The cells whose verdicts say the student's base layer is wrong: its weights' (a PyTorch
# layout, which square filters cannot show), its own at stride 1 without padding, the padding
# cell's (graded first) for a strided case with padding. A wrong im2col or col2im, which the
# layer is built on, makes it wrong too.
BASE_CELLS = tuple(cell.__name__ for cell in (conv2d_init, conv2d_forward, conv2d_backward_input,
                                              conv2d_backward_params)) + ("conv2d_padding",)


def _same(case: ConvCase, array: np.ndarray) -> np.ndarray:
    return array


def _upsampled(case: ConvCase, grad_output: np.ndarray) -> np.ndarray:
    """dL/dy of the stride-1 layer: the strided one's at every stride-th position, else 0."""
    n, o, oh, ow = case.out_shape
    s = case.stride
    full = np.zeros((n, o, (oh - 1) * s + 1, (ow - 1) * s + 1))
    full[:, :, ::s, ::s] = grad_output
    return full


def _cropped(case: ConvCase, grad: np.ndarray) -> np.ndarray:
    p = case.padding
    return grad[:, :, p:p + case.height, p:p + case.width]


@dataclass(frozen=True)
class Relation:
    """How the layer of a case relates to a base layer with the same filters: the base's
    case, its input, its upstream gradient, and the layer's output and dL/dx from the base's."""

    name: str
    base: Callable[[ConvCase], ConvCase]
    inputs: Transform
    upstream: Transform
    outputs: Transform
    input_grad: Transform


STRIDE = Relation("stride 1", lambda case: replace(case, stride=1), _same, _upsampled,
                  lambda case, y: y[:, :, ::case.stride, ::case.stride], _same)
PADDING = Relation("padding 0, on the padded input",
                   lambda case: replace(case, padding=0, height=case.height + 2 * case.padding,
                                        width=case.width + 2 * case.padding),
                   lambda case, x: pad(x, case.padding, case.padding), _same, _same, _cropped)


def _quantities(layer, x: np.ndarray, grad_output: np.ndarray) -> tuple[Run, np.ndarray | None]:
    """A layer's pass (output and dL/dx, or how each failed) and its dL/dW. dL/db is the
    backward_params cell's alone: it depends on neither the stride nor the padding."""
    run = one_pass(layer, x, grad_output)
    try:
        return run, asarray(layer.weight.grad, dtype=float)
    except (TypeError, ValueError, AttributeError):
        return run, None


class Base:
    """The student's own layer in a relation's base configuration, with the case's filters,
    run once when a quantity first needs it, beside the reference's; only when ``known_wrong``
    (a cell that judges the base layer has failed): its run can narrow the excuse that verdict
    opens, never open one."""

    def __init__(self, Conv2d, relation: Relation, case: ConvCase, x: np.ndarray,
                 grad_output: np.ndarray, known_wrong: bool) -> None:
        self.Conv2d, self.relation, self.case = Conv2d, relation, case
        self.x, self.grad_output, self.known_wrong = x, grad_output, known_wrong

    @functools.cached_property
    def runs(self) -> tuple[dict, dict]:
        """quantity -> value (None where it failed) of the student's base and the reference's;
        ``{}, {}`` when no cell found the base wrong or the student's layer cannot be built."""
        if not self.known_wrong:
            return {}, {}
        try:
            student, reference = pair(self.Conv2d, self.relation.base(self.case))
        except CheckFailure:
            return {}, {}
        x = self.relation.inputs(self.case, self.x)
        grad_output = self.relation.upstream(self.case, self.grad_output)
        return tuple({"y": run.y, "dx": run.dx, "weight": weight} for run, weight in (
            _quantities(student, x, grad_output), _quantities(reference, x, grad_output)))

    def wrong(self, quantity: str) -> bool:
        """Whether the student's own base failed to return ``quantity`` too, or returned a
        wrong one: a step that raises here is then that mistake, which its cell costs."""
        own, right = self.runs
        if not right or right[quantity] is None:
            return False
        value = own[quantity]
        return value is None or value.shape != right[quantity].shape \
            or not close(value, right[quantity])

    def layout(self):
        """The layout mistake the base's output shows, if any."""
        own, right = self.runs
        return None if not right or own["y"] is None else laid_out(own["y"], right["y"])

    def excuse(self, quantity: str) -> Excuse:
        """``quantity`` as the base's, related, when the base's is wrong and not trivial; an
        empty dL/dx where the base's is empty too."""
        def explained(got: np.ndarray) -> bool:
            own, right = self.runs
            value = own.get(quantity)
            if value is None or right.get(quantity) is None:
                return False
            if value.size == 0 < right[quantity].size:
                return got.size == 0
            if value.shape != right[quantity].shape or not finite(value) \
                    or close(value, right[quantity]) or close(value, 0 * value):
                return False
            related = {"y": self.relation.outputs, "dx": self.relation.input_grad}.get(
                quantity, _same)(self.case, value)
            return got.shape == related.shape and close(got, related)
        return explained


def _judge(what: str, got: np.ndarray, expected: np.ndarray, case: ConvCase,
           excuses: tuple[Excuse, ...], signatures, explain: Callable[[], str]) -> None:
    if passes(got, expected, excuses):
        return
    try:
        expect_close(what, got, expected, str(case), signatures)
    except CheckFailure as failure:
        raise CheckFailure(str(failure) + explain()) from None


class Upstream:
    """The student's own other parts that may explain a difference: their im2col and col2im
    (as functions, and each one's own cell's verdict), when the cell takes them, and the
    verdicts of the cells that judged their base layer."""

    def __init__(self, Conv2d, im2col=None, col2im=None) -> None:
        self.im2col, self.col2im = im2col, col2im
        self.im2col_wrong = im2col is not None and im2col_failed(im2col)
        self.col2im_wrong = col2im is not None and col2im_failed(col2im)
        self.base_wrong = self.im2col_wrong or self.col2im_wrong or any(
            verdicts.failed(Conv2d, cell) for cell in BASE_CELLS)


class Case:
    """One case of a strided (or padded) layer: the student's pass, the reference's, and the
    student's own base layer."""

    def __init__(self, Conv2d, relation: Relation, case: ConvCase, upstream: Upstream) -> None:
        self.Conv2d, self.case, self.upstream = Conv2d, case, upstream
        self.x, self.grad_output = case.inputs()
        self.student, self.reference = pair(Conv2d, case)
        self.run, _ = _quantities(self.student, self.x, self.grad_output)
        self.expected_y = self.reference.forward(self.x.copy())
        self.expected_dx = self.reference.backward(self.grad_output.copy())
        self.base = Base(Conv2d, relation, case, self.x, self.grad_output, upstream.base_wrong)
        self.weight, self.bias = filters(self.reference)
        self.wrong = forward_wrong(self.student, self.reference, self.x)

    @functools.cached_property
    def relaid(self) -> tuple[Run, np.ndarray] | None:
        """A new pass whose backward gets its gradient in the layout the student's forward
        returned, and its dL/dW (None when the output shows no layout mistake)."""
        layout = None if self.run.y is None else laid_out(self.run.y, self.expected_y)
        if layout is None:
            return None
        student, _ = pair(self.Conv2d, self.case)
        run, _ = _quantities(student, self.x, in_layout(layout, self.grad_output))
        return run, param_grad(student, self.reference, "weight")

    def forward(self) -> None:
        got, expected = self.run.y, self.expected_y
        if got is None:
            if self.base.wrong("y") or self.upstream.im2col_wrong:
                return
            fail(str(raised_hint(CheckFailure(self.run.y_failure), bias_axis_hint(self.case))))
        layout = self.base.layout()
        excuses = (self.base.excuse("y"),
                   lambda g: layout is not None and close(g, layout(expected)))
        if self.upstream.im2col is not None:
            excuses += (on_own_im2col(self.upstream.im2col, self.case, self.weight, self.bias),)
        _judge("Conv2d.forward output", got, expected, self.case, excuses,
               forward_signatures(self.x, self.weight, self.bias, self.case), str)

    def input_grad(self) -> None:
        got, expected = self.run.dx, self.expected_dx
        if got is None:
            if self.base.wrong("dx") or self.upstream.col2im_wrong:
                return
            fail(self.run.dx_failure)
        loss, probe, _ = forward_loss(self.student, self.x, self.grad_output)
        excuses = (self.base.excuse("dx"), own_forward_gradient(self.wrong, loss, probe),
                   lambda g: (again := self.relaid) is not None and again[0].dx is not None
                   and passes(again[0].dx, expected, ()))
        if self.upstream.col2im is not None:
            excuses += (on_own_col2im(self.upstream.col2im, self.case),)
        _judge("Conv2d.backward: grad_input (dL/dx)", got, expected, self.case, excuses,
               input_signatures(self.x, self.weight, self.grad_output, self.case),
               lambda: verdict(self.student, self.x, self.grad_output, got))

    def weight_grad(self) -> None:
        got = param_grad(self.student, self.reference, "weight")
        expected = self.reference.weight.grad
        loss, probe, restore = forward_loss(self.student, self.x, self.grad_output, "weight")
        try:
            _judge("Conv2d.weight.grad (dL/dW)", got, expected, self.case,
                   (self.base.excuse("weight"), own_forward_gradient(self.wrong, loss, probe),
                    lambda g: (again := self.relaid) is not None
                    and passes(again[1], expected, ())),
                   weight_signatures(self.x, self.grad_output, self.case),
                   lambda: verdict(self.student, self.x, self.grad_output, got, "weight"))
        finally:
            restore()


def expect_relation(Conv2d, relation: Relation, cases: tuple[ConvCase, ...],
                    upstream: Upstream) -> None:
    """Forward, dL/dx and dL/dW of each case, in that order; a case in which nothing ran is
    the forward cell's."""
    judged = Judged()
    for case in cases:
        judged_case = Case(Conv2d, relation, case, upstream)
        if not judged_case.run.ran:
            judged.skip(judged_case.run.y_failure)
            continue
        judged.count += 1
        judged_case.forward()
        judged_case.input_grad()
        judged_case.weight_grad()
    judged.done("Conv2d")


@check
def conv2d_stride(Conv2d, im2col, col2im):
    """Strides 2 and 3 (windows that overlap, touch, or skip pixels), with and without
    padding: forward, dL/dx and dL/dW (dL/db does not depend on the stride); judged against
    the student's own stride-1 layer, im2col, col2im and forward where those are wrong."""
    expect_relation(Conv2d, STRIDE, STRIDE_CASES, Upstream(Conv2d, im2col, col2im))


@check
def conv2d_padding(Conv2d, im2col, col2im):
    """Padding 1 and 2, also on an input smaller than the kernel: forward, dL/dx (the padded
    gradient cropped back to the input) and dL/dW; judged against the student's own
    unpadded layer on the padded input, im2col, col2im and forward where those are wrong."""
    expect_relation(Conv2d, PADDING, PADDING_CASES, Upstream(Conv2d, im2col, col2im))
