"""Checks of the bonus unit's last exercise (``cross_entropy`` and ``TensorMLP`` on the
student's Tensor): they pass the source notebook's solution run on a micrograd-style student
engine, and a broken submission gets a message written for the student, never a crash."""
from __future__ import annotations

import pytest

from autograder import registry
from autograder.mutants.autograd_nn import MUTANTS
from students import assert_mutants_cover, failure, family, grade, notebook, solution_source
from test_autograd_checks import STUDENT

SOLUTION = solution_source("12_autograd", "mlp")


SHAPE = "\n\nTensor.shape = property(lambda self: self.data.shape)\n\n\n"


def student(extra: str = "") -> dict:
    """The micrograd-style engine (with the ``shape`` of the notebook's Tensor) and the
    notebook's solution of the exercise, then ``extra``."""
    return notebook(STUDENT + SHAPE + SOLUTION + "\n\n" + extra)


def test_the_family_grades_the_two_names_of_the_exercise():
    assert family("autograd_nn") == ["tensor_cross_entropy", "tensor_mlp_model"]
    assert registry.CHECKS["tensor_cross_entropy"].targets == ("cross_entropy", "Tensor")
    assert registry.CHECKS["tensor_mlp_model"].targets == ("TensorMLP",)


def test_mutants_cover_both_names():
    assert_mutants_cover(MUTANTS, ("cross_entropy", "TensorMLP"), at_least=10)


def test_the_solution_on_a_student_engine_passes():
    names = student()
    assert grade("tensor_cross_entropy", names["cross_entropy"], names["Tensor"]) is None
    assert grade("tensor_mlp_model", names["TensorMLP"]) is None


@pytest.mark.parametrize("extra, expected", [
    ("def cross_entropy(logits, target):\n    raise NotImplementedError()", "not implemented yet"),
    ("def cross_entropy(logits, target):\n    return 0.5", "returned a float, expected a Tensor"),
    ("def cross_entropy(logits, target):\n"
     "    s = logits - logits.data.max(axis=1, keepdims=True)\n"
     "    return s.exp().sum(axis=1).log() - (s * np.eye(logits.data.shape[1])[target]).sum(axis=1)",
     "the loss is one number"),
])
def test_a_broken_cross_entropy_gets_a_message(extra, expected):
    names = student(extra)
    assert expected in failure("tensor_cross_entropy", names["cross_entropy"], names["Tensor"])


def test_an_engine_whose_backward_raises_fails_the_model_check_with_a_message():
    names = student("class Broken(Tensor):\n    def backward(self, grad=None):\n"
                    "        raise RuntimeError('engine not done')\n\n\n"
                    "class BrokenMLP(TensorMLP):\n    def __call__(self, X):\n"
                    "        out = super().__call__(X)\n        out.__class__ = Broken\n"
                    "        return out\n")
    message = failure("tensor_mlp_model", names["BrokenMLP"])
    assert "model(X).backward(G) raised RuntimeError: engine not done" in message
