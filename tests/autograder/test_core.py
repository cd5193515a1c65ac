"""The autograder's core: comparisons, diagnoses, the sandbox, integrity and the registry."""
from __future__ import annotations

import builtins
import functools
import re
import signal
import time

import numpy as np
import numpy.testing
import pytest

from autograder import check, integrity, registry
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, diagnose, not_summed, scaled, transposed
from course.testing.failure import CheckFailure
from autograder.sandbox import call, time_limit
from students import LINEAR, grade, notebook_class

LINEAR_CHECKS = ("linear_forward", "linear_backward_input", "linear_backward_params",
                 "linear_grad_accumulates", "linear_init")


# --------------------------------------------------------------------------- comparisons
def test_close_and_diagnose_signatures():
    expected = np.arange(6.0).reshape(2, 3) + 1
    assert close(expected + 1e-12, expected)
    assert not close(expected.T, expected)
    assert "halved" in diagnose(expected / 2, expected, (scaled(0.5, "halved"),))
    assert "T!" in diagnose(expected.T, expected, (transposed("T!"),))
    assert "sum!" in diagnose(np.stack([expected, expected]) / 2, expected, (not_summed("sum!"),))
    assert "sign is flipped" in diagnose(-expected, expected)
    assert "inf or NaN" in diagnose(expected * np.nan, expected)
    assert diagnose(expected + 1, expected) is None


def test_expect_close_message_names_quantity_errors_and_sample():
    expected = np.linspace(1, 2, 10)
    with pytest.raises(CheckFailure) as info:
        expect_close("dL/dW", expected * 3, expected, where="input of shape (4, 3)")
    message = str(info.value)
    assert message.startswith("dL/dW is wrong (input of shape (4, 3))")
    assert "max abs error" in message and "max rel error" in message
    expected_line = next(line for line in message.splitlines() if "expected" in line)
    assert expected_line.strip() == "expected [1, 1.11111, 1.22222, ...]"  # 3 values at most


def test_a_wrong_array_shows_its_first_difference_and_relative_errors_skip_zeros():
    """The issue's example: the first entries agree, so the sample starts where they do not;
    the zeros of expected do not turn a small error into a relative one of 1e+08."""
    expected = np.array([0.0, 0.443075, 0.0, 1.5, 2.0])
    got = expected + np.array([0.0, 0.0, 1e-2, 0.5, 0.0])
    with pytest.raises(CheckFailure) as info:
        expect_close("dL/dx", got, expected)
    message = str(info.value)
    assert "first difference at index (2,)" in message
    assert "expected [..., 0, 1.5, 2]" in message and "got      [..., 0.01, 2, 2]" in message
    assert "max rel error 0.333 (over the non-zero entries)" in message


@pytest.mark.parametrize("value, text", [
    (None, "forget a `return`"),
    ("text", "should be a numpy array"),
    (np.zeros((2, 2)), "has shape (2, 2), expected (3,)"),
])
def test_as_array_explains_bad_return_values(value, text):
    with pytest.raises(CheckFailure, match=re.escape(text)):
        as_array("Linear.forward output", value, (3,))


def test_check_failure_is_a_real_assertion_error():
    assert issubclass(CheckFailure, AssertionError)


# --------------------------------------------------------------------------- sandbox
def test_call_reports_the_student_line_and_exception():
    def backward(grad_output):
        return grad_output @ np.ones((5, 5))  # wrong shape for (2, 3)

    with pytest.raises(CheckFailure) as info:
        call("Linear.backward", backward, np.ones((2, 3)))
    message = str(info.value)
    assert message.startswith("Linear.backward raised ValueError")
    assert "your backward()" in message and "np.ones((5, 5))" in message


def test_call_reports_not_implemented():
    def forward(x):
        raise NotImplementedError()

    with pytest.raises(CheckFailure, match="not implemented yet"):
        call("ReLU.forward", forward, 1)


def test_endless_loop_is_stopped_and_the_next_check_still_runs(monkeypatch):
    endless = LINEAR.replace("        self.x = x\n",
                             "        self.x = x\n        while True:\n            pass\n")
    Linear = notebook_class(endless, "Linear")
    monkeypatch.setattr(registry, "SECONDS_PER_CHECK", 0.5)
    # however busy the machine, computing runs out before the wall-clock backstop
    monkeypatch.setattr(registry, "time_limit", functools.partial(time_limit, wall_seconds=30))
    start = time.perf_counter()
    with pytest.raises(CheckFailure, match="did not finish within 0.5 s"):
        check.linear_forward(Linear)
    assert time.perf_counter() - start < 5
    check.linear_init(Linear)  # unaffected by the previous check's alarm


def test_code_that_waits_is_stopped_by_the_wall_clock_with_its_own_message():
    with pytest.raises(CheckFailure, match="within 0.2 s, most of it spent waiting"):
        with time_limit(5, "forward", wall_seconds=0.2):
            time.sleep(3)


def test_a_slow_machine_does_not_count_against_the_computing_limit():
    """Sleeping for longer than the CPU limit (as a descheduled kernel would) is no failure."""
    with time_limit(0.2, "forward", wall_seconds=5):
        time.sleep(0.5)


def test_the_limit_leaves_signal_handlers_and_timers_as_it_found_them():
    before = {s: signal.getsignal(s) for s in (signal.SIGPROF, signal.SIGALRM)}
    with pytest.raises(CheckFailure, match="within 0.1 s of computing"):
        with time_limit(0.1, "forward", wall_seconds=30):   # a busy machine: CPU time first
            while True:
                pass
    assert {s: signal.getsignal(s) for s in before} == before
    assert signal.getitimer(signal.ITIMER_PROF) == signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


# --------------------------------------------------------------------------- a student's Linear
def test_a_correct_standalone_student_linear_passes_every_check():
    Linear = notebook_class(LINEAR, "Linear")
    for name in LINEAR_CHECKS:
        getattr(check, name)(Linear)


@pytest.mark.parametrize("line, replacement, text", [
    ("return grad_output @ self.weight.data.T", "return None", "forget a `return`"),
    ("self.weight.grad += self.x.T @ grad_output", "1 / 0", "raised ZeroDivisionError"),
    ("return grad_output @ self.weight.data.T", "return grad_output", "shape: got (4, 2)"),
])
def test_a_broken_student_linear_gets_a_message_not_a_crash(line, replacement, text):
    Linear = notebook_class(LINEAR.replace(line, replacement), "Linear")
    failures = [message for name in LINEAR_CHECKS if (message := grade(name, Linear))]
    assert any(text in f for f in failures)
    assert all("Traceback" not in f for f in failures)


def test_failure_traceback_shows_no_check_code():
    Linear = notebook_class(LINEAR.replace("+= self.x.T @ grad_output",
                                           "+= grad_output.T @ self.x"), "Linear")
    with pytest.raises(CheckFailure) as info:
        check.linear_backward_params(Linear)
    frames = [str(entry.path) for entry in info.traceback]
    assert all("autograder/checks" not in f for f in frames)


def test_all_linear_checks_take_well_under_five_seconds():
    Linear = notebook_class(LINEAR, "Linear")
    start = time.perf_counter()
    for name in LINEAR_CHECKS:
        getattr(check, name)(Linear)
    assert time.perf_counter() - start < 5


# --------------------------------------------------------------------------- integrity
def test_the_reference_class_itself_scores_zero():
    from minitorch_ref import nn

    with pytest.raises(CheckFailure, match="is or subclasses minitorch_ref.nn.linear.Linear"):
        check.linear_forward(nn.Linear)


def test_a_subclass_of_the_reference_scores_zero():
    from minitorch_ref import nn

    Linear = notebook_class("class Linear(nn.Linear):\n    pass\n", "Linear", nn=nn)
    with pytest.raises(CheckFailure, match="subclasses minitorch_ref"):
        check.linear_forward(Linear)


def test_a_class_delegating_through_a_global_name_scores_zero():
    import minitorch_ref.nn as R

    source = LINEAR + (
        "\n\nclass Delegating(Linear):\n"
        "    def backward(self, grad_output):\n"
        "        return R.Linear.backward(self, grad_output)\n"
    )
    Linear = notebook_class(source, "Delegating", R=R)
    with pytest.raises(CheckFailure, match="uses minitorch_ref.nn .*through the name 'R'"):
        check.linear_backward_input(Linear)


def test_a_class_wrapping_a_reference_object_scores_zero():
    import minitorch_ref

    source = (  # the reference class arrives as a default value: no global name to see
        "def make(factory):\n"
        "  class Linear:\n"
        "    def __init__(self, *args, impl=factory, **kwargs):\n"
        "        self.inner = impl(*args, **kwargs)\n"
        "        self.weight, self.bias = self.inner.weight, self.inner.bias\n"
        "    def forward(self, x):\n"
        "        return self.inner.forward(x)\n"
        "  return Linear\n"
    )
    Linear = notebook_class(source, "make")(minitorch_ref.nn.Linear)
    with pytest.raises(CheckFailure, match="holds a minitorch_ref"):
        check.linear_forward(Linear)


@pytest.mark.parametrize("cell", [
    "import minitorch_ref",
    "from minitorch_ref.nn import Linear as L\nclass Linear(L): pass",
    "from autograder import check\ncheck.linear_forward = lambda *a: None",
    "import autograder.integrity",
])
def test_a_notebook_importing_a_forbidden_package_scores_zero(monkeypatch, cell):
    monkeypatch.setattr(integrity, "_notebook_cells",
                        lambda: ["import numpy as np", cell, "from autograder import check"])
    with pytest.raises(CheckFailure, match="students may not import"):
        check.linear_forward(notebook_class(LINEAR, "Linear"))


def test_hidden_test_cells_and_comments_are_not_flagged(monkeypatch):
    cells = ["# no minitorch_ref here\nx = 1",
             "from autograder import check\ncheck.linear_forward(Linear)  # 2 points"]
    monkeypatch.setattr(integrity, "_notebook_cells", lambda: cells)
    check.linear_forward(notebook_class(LINEAR, "Linear"))


@pytest.mark.parametrize("target, name", [
    (np, "allclose"), (numpy.testing, "assert_allclose"), (builtins, "AssertionError"),
])
def test_monkeypatching_what_checks_rely_on_scores_zero(monkeypatch, target, name):
    replacement = Exception if name == "AssertionError" else (lambda *a, **k: True)
    monkeypatch.setattr(target, name, replacement)
    with pytest.raises(CheckFailure, match=f"replaced .*{name}"):
        check.linear_forward(notebook_class(LINEAR, "Linear"))


def test_a_monkeypatched_allclose_cannot_make_a_wrong_answer_pass(monkeypatch):
    Linear = notebook_class(LINEAR.replace("return y + self.bias.data", "return y"), "Linear")
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    monkeypatch.setattr(integrity, "tampered", lambda: [])  # even if detection were fooled
    with pytest.raises(CheckFailure, match="without the bias"):
        check.linear_forward(Linear)


def test_unknown_check_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no check named 'linear_fwd'"):
        check.linear_fwd  # noqa: B018


def test_a_function_delegating_to_the_reference_scores_zero():
    from minitorch_ref.gradcheck import numerical_gradient as reference

    source = "def numerical_gradient(f, x, h=1e-5):\n    return _ng(f, x, h)\n"
    student = notebook_class(source, "numerical_gradient", _ng=reference)
    with pytest.raises(CheckFailure, match="numerical_gradient uses minitorch_ref.gradcheck"):
        check.numerical_gradient_accuracy(student)
