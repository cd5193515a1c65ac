"""Checks of the student's Conv2d at stride 1 without padding: forward, dL/dx, dL/dW and dL/db.

The student's layer gets the reference twin's filters and both run on the same batches (several
channels, non-square images, a kernel as large as the input, values ~1000). Each cell judges
its own part (``_conv_own``): the forward built on the student's own im2col, dL/dx on their own
col2im, and every gradient against finite differences of their own forward when that forward is
wrong. A step that raises is a wrong step (``_conv_runs``): dL/dW and dL/db are judged though
col2im raised after them, and the backward cells give backward its gradient in the layout the
student's forward returned (``_conv_layouts``). A wrong value is matched against the classic
mistakes (``_conv_signatures``) and compared with finite differences of the student's own
forward.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from autograder.checks._calls import INPUT_CHANGED, expect_unchanged, placed
from autograder.checks._conv_cases import CASES, LARGE, ConvCase
from autograder.checks._conv_layouts import Layout, laid_out
from autograder.checks._conv_own import (
    on_own_col2im, on_own_im2col, own_forward_gradient, passes,
)
from autograder.checks._conv_runs import (
    PARAMS, SYMBOLS, Judged, Run, attempt, in_layout, one_pass, pair, param_grad,
)
from autograder.checks._conv_usage import expect_float32, expect_latest
from autograder.checks._conv_signatures import (
    bias_axis_hint, bias_signatures, forward_signatures, input_signatures, raised_hint,
    weight_signatures,
)
from autograder.checks._fd import fd_verdict
from autograder.checks._modules import expect_accumulation
from autograder.checks.conv_functions import col2im_failed, im2col_failed
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close
from course.testing.failure import CheckFailure, fail
FLOAT32 = ConvCase(2, 2, 3, 5, 6, 3, padding=1, seed=12)
PRECISE = 1e-10     # of the output's size: float64 work is ~1e-15 off, float32 columns ~1e-7


def layers(Conv2d, cases: tuple[ConvCase, ...]):
    """For each case: the case, the student's layer and its twin (same filters), x and dL/dy."""
    for case in cases:
        student, reference = pair(Conv2d, case)
        x, grad_output = case.inputs()
        yield case, student, reference, x, grad_output


def filters(reference) -> tuple[np.ndarray, np.ndarray | None]:
    return reference.weight.data, None if reference.bias is None else reference.bias.data


def forward_loss(student, x: np.ndarray, grad_output: np.ndarray, param: str | None = None):
    """``L = sum(forward(x) * G)`` of the student's layer, the array finite differences
    perturb (``x`` itself, or a copy of the parameter ``param``, put into the layer at every
    call), and a function that puts the parameter's original values back."""
    def weighted(y: object) -> float:
        y = asarray(y, dtype=float)
        if y.shape != grad_output.shape:
            fail(f"Conv2d.forward returned shape {y.shape}, expected {grad_output.shape}.")
        return float((y * grad_output).sum())

    if param is None:
        probe = x.copy()
        return (lambda: weighted(call("Conv2d.forward", student.forward, probe))), probe, \
            lambda: None
    holder = call(f"Conv2d.{param}", getattr, student, param)
    original = as_array(f"Conv2d.{param}.data",
                        call(f"Conv2d.{param}.data", getattr, holder, "data")).copy()
    probe = original.copy()

    def loss() -> float:
        holder.data = probe.copy()
        return weighted(call("Conv2d.forward", student.forward, x.copy()))
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


# ---------------------------------------------------------------------------- float32
def float32_pass(Conv2d):
    """A layer built with dtype=np.float32 after one pass on float32 inputs, and that pass."""
    student, reference = pair(Conv2d, FLOAT32, dtype=np.float32)
    x, grad_output = (a.astype(np.float32) for a in FLOAT32.inputs())
    return student, reference, one_pass(student, x, grad_output)


def float32_output(Conv2d) -> np.ndarray | None:
    """The output of a layer built with dtype=np.float32 for a float32 input (None if that
    forward raised), without the backward pass that ``float32_pass`` adds."""
    student, _ = pair(Conv2d, FLOAT32, dtype=np.float32)
    x = FLOAT32.inputs()[0].astype(np.float32)
    return attempt("Conv2d.forward output", student.forward, placed(x, student)[0])[0]


FLOAT32_LAYER = "Conv2d(2, 3, 3, padding=1, dtype=np.float32)"


def expect_float64_work(got: np.ndarray, expected: np.ndarray, case: ConvCase) -> None:
    """A float64 layer computes in float64: its output agrees with the reference to rounding."""
    error = float(asarray(got - expected).__abs__().max())
    size = float(asarray(expected).__abs__().max()) + 1.0
    if error > PRECISE * size:
        fail(f"Conv2d.forward output ({case}) agrees with the reference to {error / size:.1e} "
             "of its size only, as float32 arithmetic does: a float64 layer computes in "
             "float64. Keep the input's dtype in im2col and the filter matrix (no "
             ".astype(np.float32)).")


# ---------------------------------------------------------------------------- forward
def student_forward(student, x: np.ndarray, case: ConvCase) -> np.ndarray:
    """The student's output for ``x`` (their input left unchanged), or a failure that names
    the likely mistake when it raised."""
    given, read = placed(x, student)
    try:
        got = call("Conv2d.forward", student.forward, given)
    except CheckFailure as failure:
        raise raised_hint(failure, bias_axis_hint(case)) from None
    expect_unchanged(x, read, INPUT_CHANGED.format("Conv2d"))
    return as_array("Conv2d.forward output", got)


@check
def conv2d_forward(Conv2d, im2col):
    """Conv2d.forward against the reference (stride 1, no padding): several channels and
    filters, non-square images, a kernel as large as the input, bias=False, values ~1000; a
    layer built on a wrong im2col passes here when it is right on the windows that im2col
    returned to its own cell on these inputs, and where it raises, if im2col failed its own
    cell, on the inputs where it runs."""
    judged, im2col_wrong = Judged(), im2col_failed(im2col)
    for case, student, reference, x, _ in layers(Conv2d, CASES + (LARGE,)):
        weight, bias = filters(reference)
        try:
            got = student_forward(student, x, case)
        except CheckFailure as failure:
            if not im2col_wrong:
                raise
            judged.skip(str(failure))
            continue
        judged.count += 1
        expected = reference.forward(x.copy())
        if not passes(got, expected, (on_own_im2col(im2col, case, weight, bias),)):
            expect_close("Conv2d.forward output", got, expected, str(case),
                         forward_signatures(x, weight, bias, case))
        if got.dtype != expected.dtype:
            fail(f"Conv2d.forward returned dtype {got.dtype} for a {x.dtype} input; keep the "
                 f"input's dtype ({expected.dtype}).")
        if got.shape == expected.shape and close(got, expected):
            expect_float64_work(got, expected, case)
    judged.done("Conv2d.forward")
    if not im2col_wrong:        # an im2col that casts is that cell's mistake
        expect_float32(f"{FLOAT32_LAYER}.forward output", float32_output(Conv2d),
                       "layer and input")


# ---------------------------------------------------------------------------- backward
def forward_wrong(student, reference, x: np.ndarray):
    """Whether the student's forward on ``x`` differs from the reference's (asked lazily)."""
    def wrong() -> bool:
        got = asarray(call("Conv2d.forward", student.forward, x.copy()), dtype=float)
        return got.shape != reference.forward(x.copy()).shape \
            or not close(got, reference.forward(x.copy()))
    return wrong


def graded(Conv2d, case: ConvCase, layout: Layout | None = None):
    """A new pair of layers after one pass on the case's input: the student's (their output
    and dL/dx, with the upstream gradient in ``layout``), the reference's, and the input."""
    student, reference = pair(Conv2d, case)
    x, grad_output = case.inputs()
    run = one_pass(student, x, in_layout(layout, grad_output))
    reference.forward(x.copy())
    return student, reference, run, reference.backward(grad_output.copy())


def relaid(Conv2d, case: ConvCase, run: Run, reference, right) -> bool:
    """Whether ``right(student, reference, run)`` holds for a new pass whose backward gets its
    gradient in the layout the student's forward returned (when that is a layout mistake)."""
    layout = None if run.y is None else laid_out(run.y, reference.forward(case.inputs()[0]))
    if layout is None:
        return False
    student, reference, again, _ = graded(Conv2d, case, layout)
    return right(student, reference, again)


def expect_input_grad(Conv2d, case: ConvCase, judged: Judged, col2im=None,
                      col2im_wrong: bool = False) -> None:
    """dL/dx of one case against the reference, or explained by the student's own col2im (if
    given) or by their own wrong forward; a backward that raised is col2im's when that fails
    its own cell."""
    student, reference, run, expected = graded(Conv2d, case)
    if not run.ran:
        return judged.skip(run.y_failure)
    judged.count += 1
    if run.dx is None:
        if col2im_wrong:
            return
        fail(run.dx_failure)
    x, grad_output = case.inputs()
    loss, probe, _ = forward_loss(student, x, grad_output)
    excuses = (own_forward_gradient(forward_wrong(student, reference, x), loss, probe),)
    if col2im is not None:
        excuses = (on_own_col2im(col2im, case),) + excuses
    if passes(run.dx, expected, excuses) or relaid(
            Conv2d, case, run, reference,
            lambda s, r, again: again.dx is not None and passes(again.dx, expected, ())):
        return
    try:
        expect_close("Conv2d.backward: grad_input (dL/dx)", run.dx, expected, str(case),
                     input_signatures(x, reference.weight.data, grad_output, case))
    except CheckFailure as failure:
        raise CheckFailure(str(failure) + verdict(student, x, grad_output, run.dx)) from None


@check
def conv2d_backward_input(Conv2d, col2im):
    """dL/dx = col2im(G @ W.T), returned by backward: overlapping windows add up."""
    judged, col2im_wrong = Judged(), col2im_failed(col2im)
    for case in CASES:
        expect_input_grad(Conv2d, case, judged, col2im, col2im_wrong)
    judged.done("Conv2d.backward")
    if not col2im_wrong:        # a col2im that casts is that cell's mistake
        expect_float32(f"{FLOAT32_LAYER}.backward's dL/dx", float32_pass(Conv2d)[2].dx,
                       "layer and input")


# ---------------------------------------------------------------------------- dL/dW, dL/db
def expect_param_grad(student, reference, case: ConvCase, run: Run, param: str,
                      relay) -> None:
    """One parameter's .grad after a forward and a backward (read even if backward raised
    after adding it), against the reference's or explained by the student's own wrong forward
    or by their forward's layout."""
    x, grad_output = case.inputs()
    got, expected = param_grad(student, reference, param), getattr(reference, param).grad
    loss, probe, restore = forward_loss(student, x, grad_output, param)
    try:
        if passes(got, expected, (own_forward_gradient(forward_wrong(student, reference, x),
                                                       loss, probe),)) or relay():
            return
    finally:
        restore()
    signatures = weight_signatures(x, grad_output, case) if param == "weight" \
        else bias_signatures(grad_output)
    raised = "" if run.dx_failure is None else f"\n  (Then {run.dx_failure})"
    try:
        expect_close(f"Conv2d.{param}.grad ({SYMBOLS[param]})", got, expected, str(case),
                     signatures)
    except CheckFailure as failure:
        raise CheckFailure(str(failure) + raised + verdict(student, x, grad_output, got, param)) \
            from None


def expect_param_grads(Conv2d, case: ConvCase, judged: Judged) -> Layout | None:
    """Both parameters' .grad of one case; the layout their backward took its gradient in."""
    student, reference, run, _ = graded(Conv2d, case)
    if not run.ran:
        return judged.skip(run.y_failure)
    judged.count += 1
    layout = None if run.y is None else laid_out(run.y, reference.forward(case.inputs()[0]))

    def right(s, r, again) -> bool:
        return all(getattr(r, name) is None
                   or passes(param_grad(s, r, name), getattr(r, name).grad, ()) for name in PARAMS)
    for param in PARAMS:
        if getattr(reference, param) is not None:
            expect_param_grad(student, reference, case, run, param,
                              lambda: relaid(Conv2d, case, run, reference, right))
    return layout


def tolerant_pass(what: str, module, x: np.ndarray, grad_output: np.ndarray) -> None:
    """One forward and backward whose raising step leaves the gradients added before it."""
    one_pass(module, x, grad_output)


@check
def conv2d_backward_params(Conv2d):
    """dL/dW = im2col(x).T @ G laid out (C, O, k, k) and dL/db summed over the batch and the
    positions, added into .grad (also when backward raises after adding them): two backward
    passes add up (judged on the student's own gradients)."""
    judged, layouts = Judged(), {}
    for case in CASES:
        before = judged.count
        layout = expect_param_grads(Conv2d, case, judged)
        if judged.count > before:
            layouts[case] = layout
    judged.done("Conv2d.backward")
    case = next(case for case in CASES if case in layouts)
    student, once = (pair(Conv2d, case)[0] for _ in range(2))
    x, grad_output = case.inputs()
    expect_accumulation("Conv2d", student, once, x, in_layout(layouts[case], grad_output),
                        PARAMS, "Conv2d.backward's dL/dW and dL/db", tolerant_pass)
    expect_latest_forward(Conv2d, case, layouts[case])
    student, reference, _ = float32_pass(Conv2d)
    for param in PARAMS:
        expect_float32(f"{FLOAT32_LAYER}.{param}.grad", param_grad(student, reference, param),
                       "layer and input")


def expect_latest_forward(Conv2d, case: ConvCase, layout: Layout | None) -> None:
    """forward(x1), forward(x), backward(G): dL/dW is the student's own for x alone."""
    x, grad_output = case.inputs()
    x1 = replace(case, seed=case.seed + 100).inputs()[0]
    grad_output = in_layout(layout, grad_output)

    def weight_grad(*inputs: np.ndarray) -> np.ndarray:
        student, reference = pair(Conv2d, case)
        for given in inputs[:-1]:
            attempt("Conv2d.forward output", student.forward, placed(given, student)[0])
        one_pass(student, inputs[-1], grad_output)
        return param_grad(student, reference, "weight")
    expect_latest("Conv2d.weight.grad (dL/dW)", weight_grad(x1, x), weight_grad(x),
                  lambda: weight_grad(x1))
