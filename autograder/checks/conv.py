"""Checks of the student's Conv2d at stride 1 without padding: forward, dL/dx, dL/dW and dL/db.

The student's layer gets the reference twin's filters and both run on the same batches
(several channels, non-square images, a kernel as large as the input, values ~1000). Each
cell judges its own part (``_conv_own``): the forward built on the student's own im2col, dL/dx
on their own col2im, and every gradient against finite differences of their own forward when
that forward is wrong. A wrong value is matched against the classic mistakes
(``_conv_signatures``) and compared with finite differences of the student's own forward.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import method
from autograder.checks._conv_cases import ConvCase
from autograder.checks._conv_own import (
    on_own_col2im, on_own_im2col, own_forward_gradient, passes,
)
from autograder.checks._conv_signatures import (
    bias_signatures, forward_signatures, input_signatures, weight_signatures,
)
from autograder.checks._fd import fd_verdict
from autograder.checks._modules import expect_accumulation, forward_pair, twins
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close
from course.testing.failure import CheckFailure, fail
from minitorch_ref import nn as ref

PARAMS = ("weight", "bias")
CASES = (ConvCase(2, 3, 4, 5, 6, 3, seed=0), ConvCase(1, 1, 2, 4, 4, 2, seed=1),
         ConvCase(3, 2, 3, 6, 5, 3, seed=2, bias=False), ConvCase(2, 2, 1, 3, 3, 3, seed=3))
LARGE = ConvCase(2, 2, 2, 4, 4, 2, seed=4, scale=1e3)
SYMBOLS = {"weight": "dL/dW", "bias": "dL/db"}


def layers(Conv2d, cases: tuple[ConvCase, ...]):
    """For each case: the case, the student's layer and its twin (same filters), x and dL/dy."""
    for case in cases:
        args, kwargs = case.layer_args
        student, reference = twins("Conv2d", Conv2d, ref.Conv2d, *args, params=PARAMS,
                                   seed=case.seed, **kwargs)
        x, grad_output = case.inputs()
        yield case, student, reference, x, grad_output


def filters(reference) -> tuple[np.ndarray, np.ndarray | None]:
    return reference.weight.data, None if reference.bias is None else reference.bias.data


def forward_loss(student, x: np.ndarray, grad_output: np.ndarray, param: str | None = None):
    """``L = sum(forward(x) * G)`` of the student's layer, the array finite differences
    perturb (``x`` itself, or a copy of the parameter ``param``, put into the layer at every
    call), and a function that puts the parameter's original values back."""
    if param is None:
        probe = x.copy()
        return (lambda: float((asarray(call("Conv2d.forward", student.forward, probe),
                                       dtype=float) * grad_output).sum())), probe, lambda: None
    holder = call(f"Conv2d.{param}", getattr, student, param)
    original = as_array(f"Conv2d.{param}.data",
                        call(f"Conv2d.{param}.data", getattr, holder, "data")).copy()
    probe = original.copy()

    def loss() -> float:
        holder.data = probe.copy()
        return float((asarray(call("Conv2d.forward", student.forward, x.copy()), dtype=float)
                      * grad_output).sum())
    return loss, probe, lambda: call(f"restoring Conv2d.{param}.data", setattr, holder, "data",
                                     original)


def verdict(student, x: np.ndarray, grad_output: np.ndarray, got: np.ndarray,
            param: str | None = None) -> str:
    """Whether a wrong gradient agrees with finite differences of the student's own forward."""
    loss, probe, restore = forward_loss(student, x, grad_output, param)
    subject = "Your " + ("dL/dx" if param is None else SYMBOLS[param])
    try:
        return fd_verdict(loss, probe, got, subject, ", so the bug is in Conv2d.forward.",
                          ": Conv2d.backward itself is wrong.")
    finally:
        restore()


# ---------------------------------------------------------------------------- forward
@check
def conv2d_forward(Conv2d, im2col):
    """Conv2d.forward against the reference (stride 1, no padding): several channels and
    filters, non-square images, a kernel as large as the input, bias=False, values ~1000; a
    layer built on a wrong im2col passes here when it is right on what that im2col returns."""
    for case, student, reference, x, _ in layers(Conv2d, CASES + (LARGE,)):
        weight, bias = filters(reference)
        got, expected = forward_pair("Conv2d", student, reference, x)
        if not passes(got, expected, (on_own_im2col(im2col, case, x, weight, bias),)):
            expect_close("Conv2d.forward output", got, expected, str(case),
                         forward_signatures(x, weight, bias, case))
        if got.dtype != expected.dtype:
            fail(f"Conv2d.forward returned dtype {got.dtype} for a {x.dtype} input; keep the "
                 f"input's dtype ({expected.dtype}).")


# ---------------------------------------------------------------------------- dL/dx
def forward_wrong(student, reference, x: np.ndarray):
    """Whether the student's forward on ``x`` differs from the reference's (asked lazily)."""
    def wrong() -> bool:
        got = asarray(call("Conv2d.forward", student.forward, x.copy()), dtype=float)
        return got.shape != reference.forward(x.copy()).shape \
            or not close(got, reference.forward(x.copy()))
    return wrong


def expect_input_grad(student, reference, case: ConvCase, x: np.ndarray, grad_output: np.ndarray,
                      col2im=None) -> None:
    """dL/dx of one case against the reference, or explained by the student's own col2im (if
    given) or by their own wrong forward."""
    forward_pair("Conv2d", student, reference, x, in_place=False)
    got = as_array("Conv2d.backward return value (dL/dx)",
                   call("Conv2d.backward", method(student, "backward"), grad_output.copy()))
    expected = reference.backward(grad_output.copy())
    loss, probe, _ = forward_loss(student, x, grad_output)
    excuses = (own_forward_gradient(forward_wrong(student, reference, x), loss, probe),)
    if col2im is not None:
        excuses = (on_own_col2im(col2im, case, reference.weight.data, grad_output),) + excuses
    if passes(got, expected, excuses):
        return
    try:
        expect_close("Conv2d.backward: grad_input (dL/dx)", got, expected, str(case),
                     input_signatures(x, reference.weight.data, grad_output, case))
    except CheckFailure as failure:
        raise CheckFailure(str(failure) + verdict(student, x, grad_output, got)) from None


@check
def conv2d_backward_input(Conv2d, col2im):
    """dL/dx = col2im(G @ W.T), returned by backward: overlapping windows add up."""
    for case, student, reference, x, grad_output in layers(Conv2d, CASES):
        expect_input_grad(student, reference, case, x, grad_output, col2im)


# ---------------------------------------------------------------------------- dL/dW, dL/db
def expect_param_grad(student, reference, case: ConvCase, x: np.ndarray,
                      grad_output: np.ndarray, param: str) -> None:
    """One parameter's .grad after a forward and a backward, against the reference's or
    explained by the student's own wrong forward."""
    symbol = SYMBOLS[param]
    got = as_array(f"Conv2d.{param}.grad ({symbol})", getattr(getattr(student, param), "grad", None))
    expected = getattr(reference, param).grad
    loss, probe, restore = forward_loss(student, x, grad_output, param)
    try:
        if passes(got, expected, (own_forward_gradient(forward_wrong(student, reference, x),
                                                       loss, probe),)):
            return
    finally:
        restore()
    signatures = weight_signatures(x, grad_output, case) if param == "weight" \
        else bias_signatures(grad_output)
    try:
        expect_close(f"Conv2d.{param}.grad ({symbol})", got, expected, str(case), signatures)
    except CheckFailure as failure:
        raise CheckFailure(str(failure) + verdict(student, x, grad_output, got, param)) from None


def expect_param_grads(student, reference, case: ConvCase, x: np.ndarray,
                       grad_output: np.ndarray) -> None:
    forward_pair("Conv2d", student, reference, x)
    call("Conv2d.backward", method(student, "backward"), grad_output.copy())
    reference.backward(grad_output.copy())
    for param in PARAMS:
        if getattr(reference, param) is not None:
            expect_param_grad(student, reference, case, x, grad_output, param)


@check
def conv2d_backward_params(Conv2d):
    """dL/dW = im2col(x).T @ G laid out (C, O, k, k) and dL/db summed over the batch and the
    positions, added into .grad: two backward passes add up (judged on the student's own
    gradients)."""
    for case, student, reference, x, grad_output in layers(Conv2d, CASES):
        expect_param_grads(student, reference, case, x, grad_output)
    case = CASES[0]
    student, once = (next(layers(Conv2d, (case,)))[1] for _ in range(2))
    x, grad_output = case.inputs()
    expect_accumulation("Conv2d", student, once, x, grad_output, PARAMS,
                        "Conv2d.backward's dL/dW and dL/db")
