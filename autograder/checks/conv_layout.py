"""Checks of Conv2d's stride and padding, each judged on its own part.

A stride of s computes the stride-1 layer's outputs at every s-th position, and its gradients
are the stride-1 layer's for an upstream gradient with zeros at the skipped positions; padding
p is the unpadded layer applied to the padded input, with dL/dx cropped back. So when the
student's own stride-1 (unpadded) layer is wrong, a mistake its cells already cost, each
quantity here passes if it relates to that layer's as the right ones do (``Relation``); a
trivial base (one that raises, or returns zeros) explains nothing, and the reference decides.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from autograder.checks._calls import method
from autograder.checks._conv_cases import ConvCase, pad
from autograder.checks._conv_own import (
    Excuse, on_own_col2im, on_own_im2col, own_forward_gradient, passes,
)
from autograder.checks._conv_signatures import (
    forward_signatures, input_signatures, weight_signatures,
)
from autograder.checks._modules import forward_pair, twins
from autograder.checks.conv import (
    PARAMS, filters, forward_loss, forward_wrong, layers, verdict,
)
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, finite
from course.testing.failure import CheckFailure
from minitorch_ref import nn as ref

Transform = Callable[[ConvCase, np.ndarray], np.ndarray]
STRIDE_CASES = (ConvCase(2, 2, 3, 7, 5, 3, stride=2, seed=5),
                ConvCase(1, 3, 2, 9, 9, 3, stride=3, seed=6),
                ConvCase(2, 2, 2, 6, 8, 2, stride=2, seed=7),
                ConvCase(2, 1, 2, 5, 7, 3, stride=2, padding=1, seed=8))
PADDING_CASES = (ConvCase(2, 2, 3, 5, 6, 3, padding=1, seed=9),
                 ConvCase(1, 3, 2, 4, 4, 3, padding=2, seed=10),
                 ConvCase(2, 1, 2, 2, 3, 3, padding=1, seed=11))


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


def _quantities(what: str, layer, x: np.ndarray, grad_output: np.ndarray) -> dict:
    """A layer's output, dL/dx and dL/dW after one forward and backward (a student's raising
    layer: None from where it raised). dL/db is the backward_params cell's alone: it depends
    on neither the stride nor the padding."""
    found = dict.fromkeys(("y", "dx", "weight"))
    try:
        found["y"] = asarray(call(f"{what}.forward", layer.forward, x.copy()), dtype=float)
        found["dx"] = asarray(call(f"{what}.backward", method(layer, "backward"),
                                   grad_output.copy()), dtype=float)
        found["weight"] = asarray(layer.weight.grad, dtype=float)
    except (CheckFailure, TypeError, ValueError, AttributeError):
        pass
    return found


class Base:
    """The student's own layer in a relation's base configuration, with the case's filters,
    run once when a quantity first needs it, beside the reference's."""

    def __init__(self, Conv2d, relation: Relation, case: ConvCase, x: np.ndarray,
                 grad_output: np.ndarray) -> None:
        self.Conv2d, self.relation, self.case = Conv2d, relation, case
        self.x, self.grad_output = x, grad_output

    @functools.cached_property
    def runs(self) -> tuple[dict, dict]:
        base = self.relation.base(self.case)
        args, kwargs = base.layer_args
        try:
            student, reference = twins("Conv2d", self.Conv2d, ref.Conv2d, *args, params=PARAMS,
                                       seed=self.case.seed, **kwargs)
        except CheckFailure:
            return {}, {}
        x = self.relation.inputs(self.case, self.x)
        grad_output = self.relation.upstream(self.case, self.grad_output)
        return (_quantities("Conv2d", student, x, grad_output),
                _quantities("reference", reference, x, grad_output))

    def excuse(self, quantity: str) -> Excuse:
        """``quantity`` as the base's, related, when the base's is wrong and not trivial."""
        def explained(got: np.ndarray) -> bool:
            own, right = self.runs
            value = own.get(quantity)
            if value is None or value.shape != np.shape(right.get(quantity)) or not finite(value) \
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


class Judged:
    """One case of a strided (or padded) layer: the student's, the reference's, and the
    student's own other parts that may explain a difference."""

    def __init__(self, Conv2d, relation: Relation, case: ConvCase, student, reference,
                 x: np.ndarray, grad_output: np.ndarray) -> None:
        self.case, self.student, self.reference = case, student, reference
        self.x, self.grad_output = x, grad_output
        self.base = Base(Conv2d, relation, case, x, grad_output)
        self.weight, self.bias = filters(reference)
        self.wrong = forward_wrong(student, reference, x)

    def forward(self, im2col) -> None:
        got, expected = forward_pair("Conv2d", self.student, self.reference, self.x)
        excuses = (self.base.excuse("y"),) + (() if im2col is None else (
            on_own_im2col(im2col, self.case, self.x, self.weight, self.bias),))
        _judge("Conv2d.forward output", got, expected, self.case, excuses,
               forward_signatures(self.x, self.weight, self.bias, self.case), str)

    def input_grad(self, col2im) -> None:
        got = as_array("Conv2d.backward return value (dL/dx)", call(
            "Conv2d.backward", method(self.student, "backward"), self.grad_output.copy()))
        expected = self.reference.backward(self.grad_output.copy())
        loss, probe, _ = forward_loss(self.student, self.x, self.grad_output)
        excuses = (self.base.excuse("dx"), own_forward_gradient(self.wrong, loss, probe))
        if col2im is not None:
            excuses += (on_own_col2im(col2im, self.case, self.weight, self.grad_output),)
        _judge("Conv2d.backward: grad_input (dL/dx)", got, expected, self.case, excuses,
               input_signatures(self.x, self.weight, self.grad_output, self.case),
               lambda: verdict(self.student, self.x, self.grad_output, got))

    def weight_grad(self) -> None:
        got = as_array("Conv2d.weight.grad", getattr(self.student.weight, "grad", None))
        loss, probe, restore = forward_loss(self.student, self.x, self.grad_output, "weight")
        try:
            _judge("Conv2d.weight.grad (dL/dW)", got, self.reference.weight.grad, self.case,
                   (self.base.excuse("weight"), own_forward_gradient(self.wrong, loss, probe)),
                   weight_signatures(self.x, self.grad_output, self.case),
                   lambda: verdict(self.student, self.x, self.grad_output, got, "weight"))
        finally:
            restore()


def expect_relation(Conv2d, relation: Relation, cases: tuple[ConvCase, ...], im2col=None,
                    col2im=None) -> None:
    """Forward, dL/dx and dL/dW of each case, in that order."""
    for case, student, reference, x, grad_output in layers(Conv2d, cases):
        judged = Judged(Conv2d, relation, case, student, reference, x, grad_output)
        judged.forward(im2col)
        judged.input_grad(col2im)
        judged.weight_grad()


@check
def conv2d_stride(Conv2d, im2col, col2im):
    """Strides 2 and 3 (windows that overlap, touch, or skip pixels), with and without
    padding: forward, dL/dx and dL/dW (dL/db does not depend on the stride); judged against
    the student's own stride-1 layer, im2col, col2im and forward where those are wrong."""
    expect_relation(Conv2d, STRIDE, STRIDE_CASES, im2col, col2im)


@check
def conv2d_padding(Conv2d):
    """Padding 1 and 2, also on an input smaller than the kernel: forward, dL/dx (the padded
    gradient cropped back to the input) and dL/dW; judged against the student's own
    unpadded layer on the padded input where that one is wrong."""
    expect_relation(Conv2d, PADDING, PADDING_CASES)
