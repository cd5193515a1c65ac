"""The activation family's checks (ReLU ... LogSoftmax): the family has its checks and mutants
(test_mutation_audit runs them on the reference and every mutant), and they grade
hand-written student classes with clean messages."""
from __future__ import annotations

import pytest

from autograder import registry
from autograder.mutants.activation import MUTANTS
from students import (ENDLESS_FORWARD, STUB_BACKWARD, assert_mutants_cover, assert_says,
                      assert_shows_no_check_code, family, family_tests, grade, notebook_class,
                      reference_subclass, student_with)

FAMILY = family("activation", "softmax")

# A student's notebook: standalone classes, written the way the course teaches them.
STUDENT = '''
import math
import numpy as np
from scipy.special import erf


class ReLU:
    def forward(self, x):
        self.mask = x > 0
        return np.where(self.mask, x, 0.0)

    def backward(self, grad_output):
        return grad_output * self.mask


class LeakyReLU:
    def __init__(self, negative_slope=0.01):
        self.negative_slope = negative_slope

    def forward(self, x):
        self.x = x
        return np.where(x > 0, x, self.negative_slope * x)

    def backward(self, grad_output):
        return np.where(self.x > 0, grad_output, self.negative_slope * grad_output)


class Sigmoid:
    def forward(self, x):
        e = np.exp(-np.abs(x))
        self.y = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return self.y

    def backward(self, grad_output):
        return grad_output * self.y * (1 - self.y)


class Tanh:
    def forward(self, x):
        self.y = np.tanh(x)
        return self.y

    def backward(self, grad_output):
        return grad_output * (1 - self.y ** 2)


class GELU:
    def __init__(self, approximate="none"):
        self.approximate = approximate

    def forward(self, x):
        self.x = x
        if self.approximate == "tanh":
            self.t = np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))
            return 0.5 * x * (1 + self.t)
        return 0.5 * x * (1 + erf(x / math.sqrt(2)))

    def backward(self, grad_output):
        x = self.x
        if self.approximate == "tanh":
            t = self.t
            inner = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x ** 2)
            return grad_output * (0.5 * (1 + t) + 0.5 * x * (1 - t ** 2) * inner)
        cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
        pdf = np.exp(-x ** 2 / 2) / math.sqrt(2 * math.pi)
        return grad_output * (cdf + x * pdf)


class Softmax:
    def __init__(self, dim=-1):
        self.dim = dim

    def forward(self, x):
        e = np.exp(x - x.max(axis=self.dim, keepdims=True))
        self.y = e / e.sum(axis=self.dim, keepdims=True)
        return self.y

    def backward(self, grad_output):
        inner = (grad_output * self.y).sum(axis=self.dim, keepdims=True)
        return self.y * (grad_output - inner)


class LogSoftmax:
    def __init__(self, dim=-1):
        self.dim = dim

    def forward(self, x):
        shifted = x - x.max(axis=self.dim, keepdims=True)
        self.y = shifted - np.log(np.exp(shifted).sum(axis=self.dim, keepdims=True))
        return self.y

    def backward(self, grad_output):
        total = grad_output.sum(axis=self.dim, keepdims=True)
        return grad_output - np.exp(self.y) * total
'''


# --------------------------------------------------------------------------- the family
def test_family_has_the_expected_checks():
    assert len(FAMILY) >= 20
    for prefix in ("relu", "leaky_relu", "sigmoid", "tanh", "gelu", "softmax", "log_softmax"):
        assert f"{prefix}_forward" in FAMILY and f"{prefix}_backward" in FAMILY
    assert {"relu_backward_at_zero", "leaky_relu_backward_at_zero"} <= set(FAMILY)
    assert all(len(registry.CHECKS[name].targets) == 1 for name in FAMILY)


def test_at_least_ten_mutants_over_every_class():
    assert_mutants_cover(MUTANTS, ("ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax",
                                   "LogSoftmax"), at_least=10)


test_the_family_runs_fast, test_a_correct_student_passes = family_tests(FAMILY, STUDENT,
                                                                       seconds=2.0)


# --------------------------------------------------------------------------- students
# A student's class with some methods replaced, the check that fails on it and what it says.
BROKEN = [
    pytest.param("relu_backward", "ReLU", '''
def forward(self, x):
    return np.maximum(x, 0)
''', ["ReLU.backward raised AttributeError", "your ReLU.backward(): return grad_output * self.mask"],
                 id="backward_that_raises_names_the_students_line"),
    pytest.param("sigmoid_backward", "Sigmoid", '''
def backward(self, grad_output):
    grad_output * self.y * (1 - self.y)
''', ["is None. Did you forget a `return`"], id="backward_that_returns_none"),
    pytest.param("softmax_backward", "Softmax", '''
def backward(self, grad_output):
    return self.y * (grad_output - (grad_output * self.y).sum(axis=self.dim))
''', ["Softmax.backward raised ValueError", "your Softmax.backward()"],
                 id="backward_with_the_wrong_shape"),
    pytest.param("tanh_backward", "Tanh", '''
def backward(self, grad_output):
    return grad_output.sum(axis=0)
''', ["shape: got (3,), expected (4, 3)"], id="backward_that_returns_a_reduced_array"),
    pytest.param("gelu_backward", "GELU", STUB_BACKWARD, ["GELU.backward is not implemented yet"],
                 id="a_stub_is_reported_as_not_implemented"),
]


@pytest.mark.parametrize("name, target, methods, phrases", BROKEN)
def test_a_broken_student_is_told_what_is_wrong(name, target, methods, phrases):
    assert_says(grade(name, student_with(target, methods, STUDENT)), *phrases)


def test_an_endless_forward_is_stopped(timed_out):
    tanh = student_with("Tanh", ENDLESS_FORWARD, STUDENT)
    assert timed_out in grade("tanh_forward", tanh)


def test_a_float64_constant_fails_only_the_float32_check():
    gelu = student_with("GELU", '''
def forward(self, x):
    if self.approximate == "none":
        self.x = x
        return 0.5 * x * (1 + erf(x / np.sqrt(2)))
    return super().forward(x)
''', STUDENT)
    assert grade("gelu_forward", gelu) is None
    message = grade("gelu_float32", gelu)
    assert "returned dtype float64 for a float32 input" in message and "np.sqrt(2)" in message


def test_a_naive_softmax_is_told_to_subtract_the_max():
    softmax = student_with("Softmax", '''
def forward(self, x):
    e = np.exp(x)
    self.y = e / e.sum(axis=self.dim, keepdims=True)
    return self.y
''', STUDENT)
    with pytest.warns(RuntimeWarning):
        message = grade("softmax_forward", softmax)
    assert "entries up to +-1000" in message and "Subtract the maximum" in message


def test_reusing_the_reference_scores_zero():
    assert "scores zero" in grade("relu_forward", reference_subclass("ReLU"))


@pytest.mark.parametrize("name", ["relu_backward", "softmax_backward", "tanh_forward"])
def test_messages_show_no_check_code(name):
    broken = notebook_class(STUDENT + '''
class Broken:
    def __init__(self, *args, **kwargs):
        pass
    def forward(self, x):
        return x[::-1]
    def backward(self, grad_output):
        return grad_output[::-1]
''', "Broken")
    assert_shows_no_check_code(grade(name, broken))
