"""The loss checks: there are checks and mutants for every loss (test_mutation_audit runs
them on the reference and every mutant), and they turn whatever a standalone student
implementation does into a readable CheckFailure."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from autograder.mutants import loss as loss_mutants
from autograder.registry import CHECKS
from students import (assert_mutants_cover, failure, family, grade, grade_student,
                      reference_subclass)

LOSS_CHECKS = family("loss", "cross_entropy")
TARGETS = ("MSELoss", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss")


# ------------------------------------------------------------------------ a student's own losses
class StudentLoss:
    """What a student writes: no minitorch_ref, no Module base class."""

    def __init__(self, reduction="mean"):
        self.reduction = reduction

    def __call__(self, pred, target):
        return self.forward(pred, target)

    def reduce(self, losses):
        return float(losses.mean() if self.reduction == "mean" else losses.sum())

    def scale(self, count):
        return 1.0 / count if self.reduction == "mean" else 1.0


class MSE(StudentLoss):
    def forward(self, pred, target):
        self.diff = pred - target
        return self.reduce(self.diff ** 2)

    def backward(self):
        return 2 * self.diff * self.scale(self.diff.size)


class BCE(StudentLoss):
    def forward(self, pred, target):
        self.p, self.y = pred, target
        with np.errstate(divide="ignore"):
            logs = np.maximum(np.log(pred), -100), np.maximum(np.log(1 - pred), -100)
        return self.reduce(-(target * logs[0] + (1 - target) * logs[1]))

    def backward(self):
        p, y = self.p, self.y
        return (p - y) / np.maximum(p * (1 - p), 1e-12) * self.scale(p.size)


class BCEWithLogits(StudentLoss):
    def forward(self, x, y):
        self.x, self.y = x, y
        return self.reduce((1 - y) * x + np.logaddexp(0, -x))

    def backward(self):
        return (special.expit(self.x) - self.y) * self.scale(self.x.size)


class CrossEntropy(StudentLoss):
    def forward(self, z, y):
        shifted = z - z.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        self.p, self.q = np.exp(log_p), np.eye(z.shape[1])[y]
        return self.reduce(-(self.q * log_p).sum(axis=1))

    def backward(self):
        return (self.p - self.q) * self.scale(len(self.p))


class NLL(StudentLoss):
    def forward(self, log_p, y):
        self.shape, self.y = log_p.shape, y
        return self.reduce(-log_p[np.arange(len(y)), y])

    def backward(self):
        grad = np.zeros(self.shape)
        grad[np.arange(len(self.y)), self.y] = -self.scale(self.shape[0])
        return grad


STUDENT = {"MSELoss": MSE, "BCELoss": BCE, "BCEWithLogitsLoss": BCEWithLogits,
           "CrossEntropyLoss": CrossEntropy, "NLLLoss": NLL}


# ---------------------------------------------------------------------------- checks and mutants
def test_there_are_checks_for_every_loss():
    graded = {target for name in LOSS_CHECKS for target in CHECKS[name].targets}
    assert graded == set(TARGETS)
    assert len(LOSS_CHECKS) >= 13
    assert all(len(CHECKS[name].targets) == 1 for name in LOSS_CHECKS)


def test_at_least_ten_mutants_over_every_loss():
    assert_mutants_cover(loss_mutants.MUTANTS, TARGETS, at_least=10)


# ---------------------------------------------------------------------------- student submissions
@pytest.mark.parametrize("name", LOSS_CHECKS)
def test_standalone_student_passes(name):
    assert grade_student(name, STUDENT) is None


class BackwardRaises(MSE):
    def backward(self):
        return self.diff / self.missing


class ForwardReturnsNone(MSE):
    def forward(self, pred, target):
        self.diff = pred - target


class PerSampleLosses(MSE):
    def forward(self, pred, target):
        super().forward(pred, target)
        return (self.diff ** 2).mean(axis=1)


class GradWrongShape(MSE):
    def backward(self):
        return super().backward().sum(axis=0)


class BackwardTakesGradOutput(MSE):
    def backward(self, grad_output):
        return grad_output * 2 * self.diff


class NotImplementedYet(MSE):
    def backward(self):
        raise NotImplementedError


class ModifiesPredInPlace(MSE):
    def forward(self, pred, target):
        pred -= target
        self.diff = pred
        return self.reduce(pred ** 2)


class NoCall(MSE):
    __call__ = None


class FloatCrossEntropy(CrossEntropy):
    def forward(self, z, y):
        return np.float32(super().forward(z, y))


class NaiveCrossEntropy(CrossEntropy):
    def forward(self, z, y):
        self.p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        self.q = np.eye(z.shape[1])[y]
        return self.reduce(-np.log(self.p[np.arange(len(y)), y]))


class ClippedBCE(BCE):
    def forward(self, pred, target):
        self.p, self.y = pred, target
        p = np.clip(pred, 1e-7, 1 - 1e-7)
        return self.reduce(-(target * np.log(p) + (1 - target) * np.log(1 - p)))


class ClippedSigmoidLogits(BCEWithLogits):
    def forward(self, x, y):
        super().forward(x, y)
        s = np.clip(1 / (1 + np.exp(-x)), 1e-7, 1 - 1e-7)
        return self.reduce(-(y * np.log(s) + (1 - y) * np.log(1 - s)))


@pytest.mark.parametrize("cls, name, phrase", [
    (BackwardRaises, "mse_loss_backward", "AttributeError"),
    (BackwardRaises, "mse_loss_backward", "at line"),
    (ForwardReturnsNone, "mse_loss_forward", "forget a `return`"),
    (PerSampleLosses, "mse_loss_forward", "one number"),
    (GradWrongShape, "mse_loss_backward", "shape: got (3,), expected (4, 3)"),
    (BackwardTakesGradOutput, "mse_loss_backward", "backward() takes no argument"),
    (NotImplementedYet, "mse_loss_backward", "not implemented yet"),
    (ModifiesPredInPlace, "mse_loss_forward", "modified pred in place"),
    (NoCall, "mse_loss_forward", "MSELoss(pred, target) raised TypeError"),
    (reference_subclass("MSELoss"), "mse_loss_forward", "scores zero"),
    (NaiveCrossEntropy, "cross_entropy_loss_stability", "log-sum-exp trick"),
    (ClippedBCE, "bce_loss_edge_cases", "clamps each log at -100"),
    (ClippedSigmoidLogits, "bce_with_logits_loss_stability", "clipping sigmoid(x)"),
])
def test_broken_student_gets_a_clean_message(cls, name, phrase):
    message = failure(name, cls)
    assert phrase in message, message
    assert "autograder/" not in message


def test_float32_loss_value_is_accepted():
    assert grade("cross_entropy_loss_forward", FloatCrossEntropy) is None


def test_standalone_bugs_still_pass_the_ordinary_checks():
    """The stability bugs above only show on extreme inputs: the ordinary checks pass."""
    assert grade("cross_entropy_loss_forward", NaiveCrossEntropy) is None
    assert grade("bce_loss_forward", ClippedBCE) is None


class EndlessBackward(CrossEntropy):
    def backward(self):
        while True:
            pass


def test_infinite_loop_is_stopped(timed_out):
    message = failure("cross_entropy_loss_backward", EndlessBackward)
    assert timed_out in message, message
