"""The regularization family's checks (Dropout, BatchNorm1d): the family has its checks and
mutants (test_mutation_audit runs them on the reference and every mutant), and they grade
hand-written student classes (students.MODULES) with clean messages."""
from __future__ import annotations

import pytest

from autograder import registry
from autograder.mutants.regularization import MUTANTS
from students import (ENDLESS_FORWARD, MODULES, STUB_BACKWARD, assert_mutants_cover, assert_says,
                      assert_shows_no_check_code, family, family_tests, grade, grade_student,
                      notebook, notebook_class, reference_subclass, student_with)

FAMILY = family("dropout", "batchnorm")


# --------------------------------------------------------------------------- the family
def test_family_has_the_expected_checks():
    assert set(FAMILY) == {
        "dropout_train_forward", "dropout_backward", "dropout_eval", "dropout_p_zero",
        "dropout_uses_its_generator", "batchnorm_forward_train", "batchnorm_backward_input", "batchnorm_backward_params",
        "batchnorm_running_stats", "batchnorm_eval",
    }
    assert all(registry.CHECKS[name].targets[:1] in (("Dropout",), ("BatchNorm1d",))
               for name in FAMILY)
    assert registry.CHECKS["dropout_uses_its_generator"].targets == ("Dropout", "manual_seed")


def test_mutants_cover_both_classes():
    assert_mutants_cover(MUTANTS, ("Dropout", "BatchNorm1d"), at_least=12)


test_the_family_runs_fast, test_a_correct_student_passes = family_tests(FAMILY, MODULES,
                                                                       seconds=1.0)


# --------------------------------------------------------------------------- students
def test_a_binomial_dropout_passes_too():
    student = notebook(MODULES + '''
class Binomial(Dropout):
    def forward(self, x):
        keep = 1 - self.p if self.training else 1.0
        rng = default_rng() if self.rng is None else self.rng
        self.mask = rng.binomial(1, keep, size=x.shape).astype(x.dtype) / keep
        return x * self.mask
''')
    for name in ("dropout_train_forward", "dropout_backward", "dropout_eval", "dropout_p_zero",
                 "dropout_uses_its_generator"):
        assert grade_student(name, student, Dropout=student["Binomial"]) is None, name


def test_an_endless_forward_is_stopped(timed_out):
    batchnorm = student_with("BatchNorm1d", ENDLESS_FORWARD, MODULES)
    assert timed_out in grade("batchnorm_running_stats", batchnorm)


# A student's class with some methods replaced, the check that fails on it and what it says.
BROKEN = [
    pytest.param("dropout_backward", "Dropout", '''
def backward(self, grad_output):
    return grad_output * self.maks
''', ["Dropout(0.2).backward raised AttributeError",
      "your Dropout.backward(): return grad_output * self.maks"],
                 id="backward_that_raises_names_the_students_line"),
    pytest.param("batchnorm_forward_train", "BatchNorm1d", '''
def forward(self, x):
    self.y = super().forward(x)
''', ["is None. Did you forget a `return`"], id="forward_that_returns_none"),
    pytest.param("dropout_train_forward", "Dropout", '''
def forward(self, x):
    return x[np.random.rand(*x.shape) >= self.p] / (1 - self.p)
''', ["Dropout(0.2).forward output has shape", "expected (200, 250)"],
                 id="forward_with_the_wrong_shape"),
    pytest.param("batchnorm_backward_input", "BatchNorm1d", STUB_BACKWARD,
                 ["BatchNorm1d.backward is not implemented yet"],
                 id="a_stub_is_reported_as_not_implemented"),
    pytest.param("batchnorm_forward_train", "BatchNorm1d", '''
def forward(self, x):
    if not self.training:
        return super().forward(x)
    self.batch_stats = True
    mean, var = x.mean(axis=0), x.var(axis=0, ddof=1)
    self.std = np.sqrt(var + self.eps)
    self.x_hat = (x - mean) / self.std
    return self.weight.data * self.x_hat + self.bias.data
''', ["unbiased variance (divided by N - 1)"], id="np_var_with_ddof_is_named"),
    pytest.param("dropout_train_forward", "Dropout", '''
def forward(self, x):
    self.mask = (np.random.rand(*x.shape) >= self.p) / (1 - self.p)
    x *= self.mask
    return x
''', ["modified its input array in place"], id="dropout_that_changes_its_input_in_place"),
]


@pytest.mark.parametrize("name, target, methods, phrases", BROKEN)
def test_a_broken_student_is_told_what_is_wrong(name, target, methods, phrases):
    assert_says(grade(name, student_with(target, methods, MODULES)), *phrases)


def test_running_stats_under_other_names_are_asked_for_by_name():
    batchnorm = notebook_class('''
import numpy as np

class BatchNorm1d:
    def __init__(self, num_features, momentum=0.1):
        self.moving_mean, self.moving_var = np.zeros(num_features), np.ones(num_features)
    def forward(self, x):
        self.moving_mean = 0.9 * self.moving_mean + 0.1 * x.mean(axis=0)
        return (x - x.mean(axis=0)) / x.std(axis=0)
''', "BatchNorm1d")
    message = grade("batchnorm_running_stats", batchnorm)
    assert "no attribute running_mean" in message and "PyTorch's names" in message


def test_a_class_without_eval_fails_with_a_clean_message():
    dropout = notebook_class('''
import numpy as np

class Dropout:
    def __init__(self, p):
        self.p = p
    def forward(self, x):
        return x
    def backward(self, grad_output):
        return grad_output
''', "Dropout")
    assert "Dropout(0.5).eval() raised AttributeError" in grade("dropout_eval", dropout)
    assert "zeroed 0.0%" in grade("dropout_train_forward", dropout)


def test_reusing_the_reference_scores_zero():
    assert "scores zero" in grade("batchnorm_eval", reference_subclass("BatchNorm1d"))


@pytest.mark.parametrize("name", FAMILY)
def test_messages_show_no_check_code(name):
    student = notebook(MODULES + '''
class Broken(BatchNorm1d):
    def __init__(self, *args, **kwargs):
        super().__init__(kwargs.get("num_features", args[0] if args and args[0] >= 1 else 3))
    def forward(self, x):
        return x[::-1]
    def backward(self, grad_output):
        return grad_output[::-1]
''')
    target = registry.CHECKS[name].targets[0]
    assert_shows_no_check_code(grade_student(name, student, **{target: student["Broken"]}))
