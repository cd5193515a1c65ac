"""The gradient-checker checks (test_mutation_audit runs them on the reference and every
mutant) turn whatever a student's numerical_gradient / rel_error does into a CheckFailure."""
from __future__ import annotations

import numpy as np
import pytest

from autograder import check
from autograder.audit import audit_mutant, reference
from autograder.integrity import trusting
from autograder.mutants.gradcheck import MUTANTS
from students import failure


# ------------------------------------------------------------------------ a student's own functions
def student_numerical_gradient(f, x, h=1e-5):
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        i = it.multi_index
        old = x[i]
        x[i] = old + h
        plus = f()
        x[i] = old - h
        minus = f()
        x[i] = old
        grad[i] = (plus - minus) / (2 * h)
        it.iternext()
    return grad


def student_rel_error(a, b):
    if np.shape(a) != np.shape(b):
        raise ValueError(f"rel_error: shapes {np.shape(a)} and {np.shape(b)} differ")
    num = np.sqrt(np.sum((a - b) ** 2))
    den = np.sqrt(np.sum(a**2)) + np.sqrt(np.sum(b**2))
    return 0.0 if den == 0 else num / den


# ------------------------------------------------------------------------ mutants
def test_one_sided_differences_fail_only_the_accuracy_checks():
    one_sided = next(m for m in MUTANTS if m.name == "numerical_gradient_one_sided")
    with trusting([one_sided.cls]):
        verdict = audit_mutant(one_sided)
    assert "numerical_gradient_restores_x" not in verdict.caught_by


# ------------------------------------------------------------------------ student implementations
def test_correct_student_functions_pass():
    for name in ("numerical_gradient_accuracy", "numerical_gradient_restores_x",
                 "numerical_gradient_nd"):
        getattr(check, name)(student_numerical_gradient)
    check.rel_error_values(student_rel_error)


def raises(f, x, h=1e-5):
    return {}[x]


def returns_none(f, x, h=1e-5):
    student_numerical_gradient(f, x, h)


def returns_flat(f, x, h=1e-5):
    return student_numerical_gradient(f, x, h).ravel()


def perturbs_a_copy(f, x, h=1e-5):
    return student_numerical_gradient(f, x.copy(), h)


def no_step_argument(f, x):
    return student_numerical_gradient(f, x)


@pytest.mark.parametrize("name, function, expected", [
    ("numerical_gradient_accuracy", raises, "raised TypeError"),
    ("numerical_gradient_accuracy", returns_none, "is None"),
    ("numerical_gradient_nd", returns_flat, "return the gradient with x's shape"),
    ("numerical_gradient_accuracy", perturbs_a_copy, "perturb x in place"),
    ("numerical_gradient_accuracy", no_step_argument, "takes 2 positional arguments"),
    ("rel_error_values", lambda a, b: np.abs(a - b), "should be one number"),
    ("rel_error_values", lambda a, b: None, "is None"),
], ids=["raises", "none", "flat", "copy", "no-h", "array", "rel-none"])
def test_broken_student_functions_get_clean_messages(name, function, expected):
    assert expected in failure(name, function)


def test_an_endless_loop_is_stopped(timed_out):
    def endless(f, x, h=1e-5):
        while True:
            pass
    assert timed_out in failure("numerical_gradient_accuracy", endless)


def test_handing_in_the_reference_function_scores_zero():
    assert "scores zero" in failure("numerical_gradient_accuracy", reference("numerical_gradient"))
