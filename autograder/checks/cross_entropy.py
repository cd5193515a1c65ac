"""Checks of the class losses: CrossEntropyLoss (stability, label smoothing) and NLLLoss.
See ``_loss_cases`` for how a loss is graded."""
from __future__ import annotations

import numpy as np
from scipy import special

from autograder.checks._loss_cases import (
    CLASS_CASES, Family, Inputs, LossCase, Signatures, check_grads, check_stable,
    check_values,
)
from autograder.registry import check
from course.testing.diagnose import close, finite, not_finite, scaled, sign_flipped, when
from minitorch_ref import nn as ref


# ---------------------------------------------------------------------------- CrossEntropyLoss
def _onehot(target: np.ndarray, classes: int) -> np.ndarray:
    return np.eye(classes)[target]


ONE_HOT_COLUMNS = ("the one-hot matrix has a 1 in the column of every target in every row: "
                   "onehot[:, y] = 1 sets whole columns. Index the row and the column together, "
                   "onehot[np.arange(N), y] = 1 (or np.eye(C)[y]).")


def _one_hot_columns(case: LossCase, pred: np.ndarray, target: np.ndarray,
                     grad: bool) -> Signatures:
    """What ``onehot[:, y] = 1`` gives for the loss (or its gradient)."""
    wrong = np.zeros(pred.shape)
    wrong[:, target] = 1
    scale = 1 / len(pred) if case.reduction == "mean" else 1
    if grad:
        value = (special.softmax(pred, axis=1) - wrong) * scale
    else:
        value = -np.sum(wrong * special.log_softmax(pred, axis=1)) * scale
    return (when("one_hot_columns", lambda got, e: len(set(target.tolist())) > 1
                 and close(got, value), ONE_HOT_COLUMNS),)


def _ce_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    if not grad:
        return _one_hot_columns(case, pred, target, grad)
    probs = special.softmax(pred, axis=1)
    minus_onehot = -_onehot(target, pred.shape[1]) / (len(pred) if case.reduction == "mean" else 1)

    def jacobian_again(got, expected):
        return close(got, probs * (expected - (expected * probs).sum(axis=1, keepdims=True)))

    return (
        when("softmax_twice", jacobian_again,
             "dL/dz has the Softmax Jacobian applied a second time. (softmax(z) - onehot(y)) / N "
             "is already the gradient with respect to the logits z: return it as is (and do not "
             "put a Softmax layer before CrossEntropyLoss, which applies softmax itself)."),
        when("no_softmax", lambda got, expected: close(got, minus_onehot),
             "dL/dz is -onehot(y) / N: the softmax part is missing. With respect to the logits "
             "the gradient is (softmax(z) - onehot(y)) / N."),
        sign_flipped("the sign is flipped: dL/dz = (softmax(z) - onehot(y)) / N, "
                     "not onehot(y) - softmax(z)."),
    ) + _one_hot_columns(case, pred, target, grad)


def class_logits(case: LossCase) -> Inputs:
    rng = case.rng()
    n, classes = case.shape
    return 2 * rng.standard_normal(case.shape), rng.integers(0, classes, n)


CROSS_ENTROPY = Family("CrossEntropyLoss", ref.CrossEntropyLoss, class_logits, per_sample=True,
                       hints=_ce_hints)


@check
def cross_entropy_loss_forward(CrossEntropyLoss):
    """mean over samples of log(sum(exp(z))) - z[target] on logits (N, C), and 'sum'."""
    check_values(CrossEntropyLoss, CROSS_ENTROPY, CLASS_CASES)


@check
def cross_entropy_loss_backward(CrossEntropyLoss):
    """dL/dz = (softmax(z) - onehot(y)) / N (no 1/N for 'sum')."""
    check_grads(CrossEntropyLoss, CROSS_ENTROPY, CLASS_CASES)


LOG_SUM_EXP = "log_softmax(z) = z - m - log(sum(exp(z - m))), with m the row's max"


CE_VALUE_STABILITY = (
    not_finite("inf or NaN for logits of magnitude 1000: exp(1000) overflows (and exp(-1000) "
               f"underflows to 0, then 0/0). Use the log-sum-exp trick: {LOG_SUM_EXP}."),
    when("log_of_clamped_softmax",
         lambda got, expected: finite(got) and float(got) < float(expected),
         "the loss is too small for a confident wrong prediction: a softmax probability "
         "underflowed to 0 and its log was clamped (or had an epsilon added). Compute the "
         f"log-softmax directly, with the log-sum-exp trick: {LOG_SUM_EXP}."),
)


CE_GRAD_STABILITY = (
    not_finite("inf or NaN in dL/dz for logits of magnitude 1000: compute softmax(z) as "
               "exp(z - m) / sum(exp(z - m)), with m the row's max."),
)


CE_STABILITY = tuple((where, np.array(pred), np.array(target), CE_VALUE_STABILITY,
                      CE_GRAD_STABILITY) for where, pred, target in (
    ("logits of +-1000", [[-1000.0, 1000.0, 999.0], [1000.0, -1000.0, 0.0],
                          [1000.0, 1000.0, 1000.0], [-1000.0, -1000.0, 1000.0]], [2, 0, 1, 0]),
    ("logits all near -1000", [[-1000.0, -1000.0, -999.0], [-1002.0, -1000.0, -1001.0]], [0, 1]),
))


@check(hears=("warnings",))
def cross_entropy_loss_stability(CrossEntropyLoss):
    """Logits of +-1000: the loss and dL/dz are finite and exact (log-sum-exp trick); while
    the plain values are wrong, equal to the student's own at the logits shifted by their rows'
    maxima (softmax does not depend on that shift)."""
    check_stable(CrossEntropyLoss, CROSS_ENTROPY, CE_STABILITY,
                 f"use the log-sum-exp trick, {LOG_SUM_EXP}, and compute softmax(z) as "
                 "exp(z - m) / sum(exp(z - m)): exp then only sees values <= 0.",
                 invariant=lambda z: z - z.max(axis=1, keepdims=True))


# ---------------------------------------------------------------------------- NLLLoss
def _nll_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    rule = ("dL/dpred is -1/N at each sample's target class, 0 elsewhere" if grad else
            "-pred[n, target[n]], not +log p (pred holds log-probabilities, which are <= 0, "
            "so the loss is >= 0)")
    signatures = (sign_flipped(f"the sign is flipped: NLLLoss is the negative log-likelihood: "
                               f"{rule}."),)
    classes = pred.shape[1]
    if case.reduction == "mean" and classes > 1:
        what = "dL/dpred" if grad else "the loss"
        signatures += (scaled(1 / classes, f"{what} is exactly {classes} (the number of classes) "
                                           "times too small: it is divided by N x C (pred.size). "
                                           "NLLLoss averages over the N samples only."),)
    return signatures


def log_probabilities(case: LossCase) -> Inputs:
    logits, target = class_logits(case)
    return special.log_softmax(logits, axis=1), target


NLL = Family("NLLLoss", ref.NLLLoss, log_probabilities, per_sample=True, hints=_nll_hints)


@check
def nll_loss_forward(NLLLoss):
    """mean over samples of -pred[n, target[n]] on log-probabilities (N, C), and 'sum'."""
    check_values(NLLLoss, NLL, CLASS_CASES)


@check
def nll_loss_backward(NLLLoss):
    """dL/dpred = -1/N at each sample's target class, 0 elsewhere (-1 for 'sum')."""
    check_grads(NLLLoss, NLL, CLASS_CASES)
