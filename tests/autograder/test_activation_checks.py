"""The activation family's checks (ReLU ... Flatten): they pass the reference, catch and
name every mutant, and grade hand-written student classes with clean messages."""
from __future__ import annotations

import itertools
import linecache
import time

import pytest

from autograder import audit, check, registry
from autograder.failure import CheckFailure
from autograder.mutants.activation import MUTANTS

FAMILY = sorted(name for name, c in registry.CHECKS.items()
                if c.run.__module__ == "autograder.checks.activation")

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


class Identity:
    def forward(self, x):
        return x

    def backward(self, grad_output):
        return grad_output


class Flatten:
    def __init__(self, start_dim=1, end_dim=-1):
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        self.shape = x.shape
        start, end = self.start_dim % x.ndim, self.end_dim % x.ndim
        return x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:])

    def backward(self, grad_output):
        return grad_output.reshape(self.shape)
'''


_CELLS = itertools.count(1)


def notebook(source: str, **names) -> dict:
    """Run ``source`` as a notebook cell would (its own globals, its lines in linecache,
    as IPython keeps them); return its namespace."""
    filename = f"<ipython-input-{next(_CELLS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", **names}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def grade(name: str, cls: type) -> str | None:
    """The failure message of check ``name`` on ``cls``, or None if it passes."""
    try:
        getattr(check, name)(cls)
    except CheckFailure as failure:
        return str(failure)
    return None


def student_with(name: str, methods: str) -> type:
    """The correct student's class ``name`` with some methods replaced by ``methods``."""
    body = "\n".join("    " + line for line in methods.strip("\n").splitlines())
    return notebook(STUDENT + f"\n\nclass {name}({name}):\n{body}\n")[name]


# --------------------------------------------------------------------------- audit
def test_family_has_the_expected_checks():
    assert len(FAMILY) >= 20
    for prefix in ("relu", "leaky_relu", "sigmoid", "tanh", "gelu", "softmax", "log_softmax",
                   "identity", "flatten"):
        assert f"{prefix}_forward" in FAMILY and f"{prefix}_backward" in FAMILY
    assert {"relu_backward_at_zero", "leaky_relu_backward_at_zero"} <= set(FAMILY)


@pytest.mark.parametrize("name", FAMILY)
def test_check_passes_on_the_reference(name):
    assert audit.run(registry.CHECKS[name]) is None


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught_and_diagnosed(mutant):
    verdict = audit.audit_mutant(mutant)
    assert verdict.caught_by, f"no check catches {mutant.name} ({mutant.bug})"
    assert verdict.diagnosed, f"{mutant.name}: no message names '{mutant.diagnosis}':\n" + \
        "\n---\n".join(verdict.messages)


def test_at_least_ten_mutants_over_every_class():
    assert len(MUTANTS) >= 10
    assert {m.target for m in MUTANTS} == {"ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU",
                                           "Softmax", "LogSoftmax", "Identity", "Flatten"}


def test_the_family_runs_fast():
    start = time.perf_counter()
    for name in FAMILY:
        audit.run(registry.CHECKS[name])
    assert time.perf_counter() - start < 2.0


# --------------------------------------------------------------------------- students
@pytest.mark.parametrize("name", FAMILY)
def test_a_correct_student_passes(name):
    target, = registry.CHECKS[name].targets
    assert grade(name, notebook(STUDENT)[target]) is None


def test_backward_that_raises_names_the_students_line():
    relu = student_with("ReLU", '''
def forward(self, x):
    return np.maximum(x, 0)
''')
    message = grade("relu_backward", relu)
    assert "ReLU.backward raised AttributeError" in message
    assert "your backward(): return grad_output * self.mask" in message


def test_backward_that_returns_none():
    sigmoid = student_with("Sigmoid", '''
def backward(self, grad_output):
    grad_output * self.y * (1 - self.y)
''')
    assert "is None. Did you forget a `return`" in grade("sigmoid_backward", sigmoid)


def test_backward_with_the_wrong_shape():
    softmax = student_with("Softmax", '''
def backward(self, grad_output):
    return self.y * (grad_output - (grad_output * self.y).sum(axis=self.dim))
''')
    message = grade("softmax_backward", softmax)
    assert "Softmax.backward raised ValueError" in message and "your backward()" in message


def test_backward_that_returns_a_reduced_array():
    flatten = student_with("Flatten", '''
def backward(self, grad_output):
    return grad_output.sum(axis=0)
''')
    assert "shape: got (60,), expected (2, 3, 4, 5)" in grade("flatten_backward", flatten)


def test_an_endless_forward_is_stopped(monkeypatch):
    monkeypatch.setattr(registry, "SECONDS_PER_CHECK", 0.3)
    tanh = student_with("Tanh", '''
def forward(self, x):
    while True:
        pass
''')
    assert "did not finish within 0.3 s" in grade("tanh_forward", tanh)


def test_a_stub_is_reported_as_not_implemented():
    gelu = student_with("GELU", '''
def backward(self, grad_output):
    raise NotImplementedError
''')
    assert "GELU.backward is not implemented yet" in grade("gelu_backward", gelu)


def test_a_flatten_without_start_dim_fails_only_that_check():
    flatten = student_with("Flatten", '''
def __init__(self):
    self.start_dim, self.end_dim = 1, -1
''')
    assert grade("flatten_forward", flatten) is None
    assert "Flatten(start_dim=2) raised TypeError" in grade("flatten_start_end_dim", flatten)


def test_a_float64_constant_fails_only_the_float32_check():
    gelu = student_with("GELU", '''
def forward(self, x):
    if self.approximate == "none":
        self.x = x
        return 0.5 * x * (1 + erf(x / np.sqrt(2)))
    return super().forward(x)
''')
    assert grade("gelu_forward", gelu) is None
    message = grade("gelu_float32", gelu)
    assert "returned dtype float64 for a float32 input" in message and "np.sqrt(2)" in message


def test_a_naive_softmax_is_told_to_subtract_the_max():
    softmax = student_with("Softmax", '''
def forward(self, x):
    e = np.exp(x)
    self.y = e / e.sum(axis=self.dim, keepdims=True)
    return self.y
''')
    with pytest.warns(RuntimeWarning):
        message = grade("softmax_forward", softmax)
    assert "entries up to +-1000" in message and "Subtract the maximum" in message


def test_reusing_the_reference_scores_zero():
    from minitorch_ref import nn

    class ReLU(nn.ReLU):
        pass

    assert "scores zero" in grade("relu_forward", ReLU)


@pytest.mark.parametrize("name", ["relu_backward", "softmax_backward", "flatten_forward"])
def test_messages_show_no_check_code(name):
    broken = notebook(STUDENT + '''
class Broken:
    def __init__(self, *args, **kwargs):
        pass
    def forward(self, x):
        return x[::-1]
    def backward(self, grad_output):
        return grad_output[::-1]
''')["Broken"]
    message = grade(name, broken)
    assert message and "Traceback" not in message and "def " not in message
    assert "autograder" not in message and "minitorch_ref" not in message
