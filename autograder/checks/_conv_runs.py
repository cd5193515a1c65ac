"""One forward and backward of a student's Conv2d, where a raising step is a wrong step.

A forward that raises may have saved what its backward needs (the bias added last, on the
wrong axis), and a backward that raises may have added dL/dW and dL/db before (a ``col2im``
that raises): so backward is called even after forward raised, and the gradients are read
even after backward raised. Each cell then judges what does not depend on the step that
raised; a case in which nothing ran is the forward cell's, and a cell that could judge no
case at all fails with the first failure it met.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder.checks._calls import method, placed
from autograder.checks._conv_cases import ConvCase
from autograder.checks._conv_layouts import Layout, torch_weight
from autograder.checks._modules import copy_parameter, twins
from autograder.sandbox import call
from course.testing.compare import as_array
from course.testing.failure import CheckFailure, fail
from minitorch_ref import nn as ref

PARAMS = ("weight", "bias")
SYMBOLS = {"weight": "dL/dW", "bias": "dL/db"}


@dataclass(frozen=True)
class Run:
    """What one pass returned: the output and dL/dx (None where that step failed, with its
    failure's message)."""

    y: np.ndarray | None
    y_failure: str | None
    dx: np.ndarray | None
    dx_failure: str | None

    @property
    def ran(self) -> bool:
        """Whether any step returned: a case where none did is the forward cell's."""
        return self.y is not None or self.dx is not None


def attempt(what: str, function, *args) -> tuple[np.ndarray | None, str | None]:
    """``function(*args)`` as an array, or None and the failure's message (``what`` names the
    value; its first word, the call)."""
    try:
        return as_array(what, call(what.split(" ")[0], function, *args)), None
    except CheckFailure as failure:
        return None, str(failure)


def one_pass(student, x: np.ndarray, grad_output: np.ndarray) -> Run:
    """``student.forward(x)``, then ``student.backward(grad_output)`` whatever forward did."""
    given, _ = placed(x, student)
    y, y_failure = attempt("Conv2d.forward output", student.forward, given)
    dx, dx_failure = attempt("Conv2d.backward return value (dL/dx)",
                              method(student, "backward"), grad_output.copy())
    return Run(y, y_failure, dx, dx_failure)


def pair(Conv2d, case: ConvCase, **extra):
    """The student's layer and the reference's (``extra``: more arguments, a dtype), with the
    same (the reference's) filters: a weight in PyTorch's ``(O, C, k, k)`` layout gets them in
    that layout, which the forward cell costs (the reference's ``torch_weight`` says so)."""
    args, kwargs = case.layer_args
    student, reference = twins("Conv2d", Conv2d, ref.Conv2d, *args, params=("bias",),
                               seed=case.seed, **kwargs, **extra)
    param = getattr(student, "weight", None)
    shape = np.shape(getattr(param, "data", None))
    reference.torch_weight = torch_weight(shape, reference.weight.shape)
    if not reference.torch_weight:
        copy_parameter("Conv2d", student, reference, "weight")
        return student, reference
    param.data = reference.weight.data.transpose(1, 0, 2, 3).copy()
    if np.shape(getattr(param, "grad", None)) != shape:
        fail(f"Your Conv2d.weight.grad should be an array of zeros of the weight's shape {shape} "
             "after construction.")
    return student, reference


def param_grad(student, reference, param: str) -> np.ndarray:
    """The student's ``param.grad``, in the course's layout."""
    got = as_array(f"Conv2d.{param}.grad ({SYMBOLS[param]})",
                   getattr(getattr(student, param), "grad", None))
    if param == "weight" and reference.torch_weight and got.ndim == 4:
        return got.transpose(1, 0, 2, 3)
    return got


def in_layout(layout: Layout | None, grad_output: np.ndarray) -> np.ndarray:
    """The upstream gradient in the layout the student's forward returned."""
    return grad_output if layout is None else np.ascontiguousarray(layout(grad_output))


class Judged:
    """Counts the cases a cell could judge; ``done`` fails when there was none."""

    def __init__(self) -> None:
        self.count, self.first = 0, ""

    def skip(self, failure: str | None) -> None:
        self.first = self.first or failure or ""

    def done(self, what: str) -> None:
        if not self.count:
            fail(f"{what} could not be judged on any input: " + str(self.first))
