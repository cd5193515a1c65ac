"""Checks of the elementwise losses: MSELoss, BCELoss (with its clamped edge cases) and
BCEWithLogitsLoss (pos_weight, stability). See ``_loss_cases`` for how a loss is graded."""
from __future__ import annotations

import numpy as np

from autograder.checks._loss_cases import (
    ELEMENTWISE_CASES, Family, Inputs, LossCase, Signatures, quiet, check_grads,
    check_stable, check_values, expect_value, student_grad,
)
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import construct
from course.testing.compare import expect_close, mismatch
from course.testing.diagnose import close, finite, not_finite, scaled, sign_flipped, when
from course.testing.failure import fail
from minitorch_ref import nn as ref


# ---------------------------------------------------------------------------- MSELoss
def _mse_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    features = pred.size // len(pred)
    signatures = (
        scaled(0.5, "dL/dpred is exactly half the expected value: the factor 2 of "
                    "d(x^2)/dx = 2x is missing: dL/dpred = 2 (pred - target) / M."),
        sign_flipped("the sign is flipped: dL/dpred = 2 (pred - target) / M, "
                     "not 2 (target - pred) / M."),
    ) if grad else ()
    if case.reduction == "mean" and len(pred) > 1 and features > 1:
        signatures += (scaled(features, f"{'dL/dpred' if grad else 'the loss'} is exactly "
                                        f"{features} (the number of columns) times too large: "
                                        "it is divided by the batch size N only. MSELoss "
                                        "averages over all M = N x D elements (pred.size)."),)
    return signatures


def regression(case: LossCase) -> Inputs:
    rng = case.rng()
    return rng.standard_normal(case.shape), rng.standard_normal(case.shape)


MSE = Family("MSELoss", ref.MSELoss, regression, per_sample=False, hints=_mse_hints)


@check
def mse_loss_forward(MSELoss):
    """mean((pred - target)^2) over all elements, on several shapes (batch 1), and 'sum'."""
    check_values(MSELoss, MSE, ELEMENTWISE_CASES)


@check
def mse_loss_backward(MSELoss):
    """dL/dpred = 2 (pred - target) / M (M = number of elements; no 1/M for 'sum')."""
    check_grads(MSELoss, MSE, ELEMENTWISE_CASES)


# ---------------------------------------------------------------------------- BCELoss
def _bce_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    slope = pred * (1 - pred)
    return (when("not_divided", lambda got, expected: close(got, expected * slope),
                 "dL/dpred is (p - y) scaled by the reduction, without dividing by p(1 - p): "
                 "that is the gradient with respect to the logit (BCEWithLogitsLoss's). With "
                 "respect to the probability p it is (p - y) / (p(1 - p))."),) if grad else ()


def probabilities(case: LossCase) -> Inputs:
    rng = case.rng()
    return rng.uniform(0.05, 0.95, case.shape), rng.integers(0, 2, case.shape).astype(float)


BCE = Family("BCELoss", ref.BCELoss, probabilities, per_sample=False, hints=_bce_hints)


@check
def bce_loss_forward(BCELoss):
    """-[y log p + (1 - y) log(1 - p)] averaged (or summed), probabilities in (0, 1)."""
    check_values(BCELoss, BCE, ELEMENTWISE_CASES)


@check
def bce_loss_backward(BCELoss):
    """dL/dp = (p - y) / (p (1 - p)), divided by M for the mean."""
    check_grads(BCELoss, BCE, ELEMENTWISE_CASES)


BCE_EDGE = (np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]]),
            np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 0.0]]))


BCE_EDGE_WHERE = "probabilities exactly 0 and 1"


BCE_CLAMP = (
    not_finite("inf or NaN for probabilities exactly 0 or 1: log(0) = -inf (and 0 * -inf = "
               "NaN). Clamp each log at -100 as PyTorch does: np.maximum(np.log(p), -100), "
               "np.maximum(np.log(1 - p), -100)."),
    when("epsilon", lambda got, expected: finite(got),
         "finite but not PyTorch's value: clipping p (or adding an epsilon inside the log) "
         "changes the loss at p in {0, 1}. PyTorch clamps each log at -100, so a certain but "
         "wrong prediction costs exactly 100."),
)


def _signs(a: np.ndarray) -> np.ndarray:
    return (a > 0) * 1.0 - (a < 0) * 1.0


@check
def bce_loss_edge_cases(BCELoss):
    """p exactly 0 or 1: the loss with each log clamped at -100, the gradient divided by
    max(p(1 - p), 1e-12), as in PyTorch."""
    pred, target = BCE_EDGE
    student, reference = construct(BCELoss), ref.BCELoss()
    check_instance("BCELoss", student)
    case = LossCase(pred.shape)
    with quiet():
        expect_value(BCE, student, reference, pred, target, case, BCE_EDGE_WHERE, BCE_CLAMP)
        got = student_grad("BCELoss", student, pred, target)
    expected = reference.backward()
    if got.shape != expected.shape or not finite(got):
        fail(mismatch("BCELoss.backward(): dL/dpred", got, expected, BCE_EDGE_WHERE) +
             "\n  The gradient must stay finite at p = 0 and p = 1: divide by "
             "max(p(1 - p), 1e-12) instead of p(1 - p).")
    inside = (pred > 0) & (pred < 1)
    expect_close("BCELoss.backward(): dL/dpred where 0 < p < 1", got[inside], expected[inside],
                 BCE_EDGE_WHERE)
    expect_close("BCELoss.backward(): dL/dpred where p is 0 or 1", got[~inside],
                 expected[~inside], BCE_EDGE_WHERE, _edge_signatures(expected[~inside]))


def _edge_signatures(expected: np.ndarray) -> Signatures:
    """A gradient at p in {0, 1} of the wrong size, nonzero where p = y, or of the wrong sign."""
    zero = expected == 0
    signs_right = lambda got: close(_signs(got[~zero]), _signs(expected[~zero]), 0, 0)  # noqa: E731
    floor = ("PyTorch divides by max(p(1 - p), 1e-12), so where p is 0 or 1 the gradient is "
             f"(p - y) / 1e-12 / M (here +-{np.abs(expected).max():.3g}), and 0 where p = y.")
    return (
        when("floor", lambda got, e: signs_right(got) and not got[zero].any(),
             f"the signs are right but not the size: {floor} Another epsilon gives another size."),
        when("clipped", lambda got, e: signs_right(got) and got[zero].all(),
             f"the gradient is not 0 where p equals y: clipping p to [eps, 1 - eps] moves it off "
             f"0 and 1, so p - y is no longer 0 there. Leave p as it is: {floor}"),
        when("signs", lambda got, e: True,
             f"where p equals y the gradient is 0; elsewhere it has the sign of p - y. {floor}"),
    )


# ---------------------------------------------------------------------------- BCEWithLogitsLoss
def binary_logits(case: LossCase) -> Inputs:
    rng = case.rng()
    return 3 * rng.standard_normal(case.shape), rng.integers(0, 2, case.shape).astype(float)


BCE_LOGITS = Family("BCEWithLogitsLoss", ref.BCEWithLogitsLoss, binary_logits, per_sample=False)


@check
def bce_with_logits_loss_forward(BCEWithLogitsLoss):
    """Binary cross-entropy of sigmoid(x) computed from the logits x, mean and 'sum'."""
    check_values(BCEWithLogitsLoss, BCE_LOGITS, ELEMENTWISE_CASES)


@check
def bce_with_logits_loss_backward(BCEWithLogitsLoss):
    """dL/dx = (sigmoid(x) - y) / M (no 1/M for 'sum')."""
    check_grads(BCEWithLogitsLoss, BCE_LOGITS, ELEMENTWISE_CASES)


STABLE_FORM = ("Use the stable form l = (1 - y) x + log(1 + exp(-|x|)) + max(-x, 0), "
               "e.g. (1 - y) * x + np.logaddexp(0, -x).")


def _large_logits(side: str, pred: np.ndarray, target: np.ndarray, cause: str) -> tuple:
    where = f"large {side} logits, from {pred.min():g} to {pred.max():g}"
    value_signatures = (
        not_finite(f"inf or NaN for large {side} logits: {cause}. {STABLE_FORM}"),
        when("clipped", lambda got, expected: finite(got),
             f"finite but wrong for large {side} logits: clipping sigmoid(x) to "
             f"[eps, 1 - eps] (or an eps inside the log) caps each term. {STABLE_FORM}"),
    )
    grad_signatures = (not_finite(
        f"inf or NaN in dL/dx for large {side} logits: compute sigmoid(x) without overflow "
        "(1 / (1 + exp(-x)) for x >= 0, exp(x) / (1 + exp(x)) for x < 0)."),)
    return where, pred, target, value_signatures, grad_signatures


_LARGE = np.array([[-1000.0, -100.0, -40.0], [-1000.0, -100.0, -750.0]])


_LARGE_TARGET = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])


LOGITS_STABILITY = (
    _large_logits("negative", _LARGE, _LARGE_TARGET,
                  "sigmoid(x) underflows to 0 and log(sigmoid(x)) = log(0) = -inf"),
    _large_logits("positive", -_LARGE, 1 - _LARGE_TARGET,
                  "sigmoid(x) rounds to 1 and log(1 - sigmoid(x)) = log(0) = -inf"),
)


@check(hears=("warnings",))
def bce_with_logits_loss_stability(BCEWithLogitsLoss):
    """Logits of magnitude 40 to 1000, both signs: exact, finite loss and gradient."""
    check_stable(BCEWithLogitsLoss, BCE_LOGITS, LOGITS_STABILITY,
                 "the loss as (1 - y) * x + np.logaddexp(0, -x), and sigmoid(x) in backward "
                 "as the stable Sigmoid()(x) or np.exp(-np.logaddexp(0, -x)).")
