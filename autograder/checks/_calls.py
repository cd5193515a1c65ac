"""Calling a student module's methods so that a missing method, an error or a wrong return
becomes a readable failure: ``method``, ``set_mode``, ``student_forward``, ``student_backward``."""
from __future__ import annotations

import numpy as np

from autograder.sandbox import call
from course.testing.compare import as_array
from course.testing.diagnose import close
from course.testing.failure import expect


def method(obj: object, name: str):
    """``obj.<name>``, looked up only when called, so that inside ``call`` a missing method
    fails the check with a readable message like any other error."""
    return lambda *args: getattr(obj, name)(*args)


def set_mode(what: str, module: object, training: bool) -> None:
    """``module.train()`` or ``module.eval()``; a missing method or an error fails the check."""
    name = "train" if training else "eval"
    call(f"{what}.{name}()", method(module, name))


def student_forward(what: str, module: object, x: np.ndarray) -> np.ndarray:
    """The student's output as an array of x's shape; fails if forward changed x in place."""
    given = x.copy()
    y = call(f"{what}.forward", method(module, "forward"), given)
    expect(close(given, x, 0, 0),
           f"{what}.forward modified its input array in place; compute a new array instead.")
    return as_array(f"{what}.forward output", y, x.shape)


def student_backward(what: str, module: object, grad_output: np.ndarray) -> np.ndarray:
    got = call(f"{what}.backward", method(module, "backward"), grad_output.copy())
    return as_array(f"{what}.backward return value (dL/dx)", got, grad_output.shape)
