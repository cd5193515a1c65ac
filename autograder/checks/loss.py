"""Checks of the losses: the value, dL/dpred, the reductions, numerical stability, options.

A loss is called as ``loss.forward(pred, target) -> float`` (or ``loss(pred, target)``)
and ``loss.backward() -> dL/dpred``. Each check builds the student's loss and its
``minitorch_ref`` twin with the same options and compares them on the same inputs;
a wrong gradient is also compared with finite differences of the student's own
forward, which tells a wrong loss formula from a wrong backward.
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
from scipy import special

from course.testing.compare import as_array, expect_close, mismatch
from course.testing.diagnose import Signature, close, finite, not_finite, scaled, sign_flipped, when
from course.testing.failure import CheckFailure, fail
from autograder.checks._fd import fd_verdict
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call, construct
from minitorch_ref import nn as ref
from minitorch_ref.gradcheck import FD_NORM_FLOOR

Inputs = tuple[np.ndarray, np.ndarray]
Signatures = tuple[Signature, ...]


# ---------------------------------------------------------------------------- cases and families
@dataclass(frozen=True)
class LossCase:
    """One input configuration: the shape of pred, a seed and the reduction."""

    shape: tuple[int, ...]
    seed: int = 0
    reduction: str = "mean"

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)

    def __str__(self) -> str:
        return f"pred of shape {self.shape}, reduction='{self.reduction}'"


# Several seeds, batch size 1, non-square, a column target; 'sum' on two shapes.
ELEMENTWISE_CASES = (LossCase((4, 3), 0), LossCase((1, 5), 1), LossCase((7, 2), 2),
                     LossCase((5, 1), 3), LossCase((4, 3), 4, "sum"), LossCase((1, 5), 5, "sum"))
CLASS_CASES = (LossCase((4, 3), 0), LossCase((1, 5), 1), LossCase((7, 2), 2),
               LossCase((3, 6), 3), LossCase((4, 3), 4, "sum"), LossCase((1, 4), 5, "sum"))


def no_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    return ()


@dataclass(frozen=True)
class Family:
    """A loss class: its reference, its inputs, what its mean averages over, its bug hints."""

    name: str
    reference: type
    inputs: Callable[[LossCase], Inputs]
    per_sample: bool  # the mean is over the N samples, not over all M elements
    hints: Callable[[LossCase, np.ndarray, np.ndarray, bool], Signatures] = no_hints

    def signatures(self, case: LossCase, pred: np.ndarray, target: np.ndarray,
                   grad: bool) -> Signatures:
        """The family's own bug signatures, then a reduction off by the number of terms."""
        return self.hints(case, pred, target, grad) + reduction_signatures(
            len(pred) if self.per_sample else pred.size,
            "samples N" if self.per_sample else "elements M", case.reduction, grad)


def reduction_signatures(count: int, unit: str, reduction: str, grad: bool) -> Signatures:
    """A value or gradient off by the number of averaged terms."""
    quantity = "dL/dpred" if grad else "the loss"
    if count == 1:
        return ()
    if reduction == "sum":
        return (scaled(1 / count, f"{quantity} is 1/{count} of the expected value: with "
                                  f"reduction='sum' add the terms up, do not divide by the "
                                  f"number of {unit}."),)
    too_large = (f"the mean's 1/{unit[-1]} is missing from the gradient: with reduction='mean' "
                 f"each term's gradient is divided by the number of {unit} ({count})." if grad else
                 f"it is summed instead of averaged: divide by the number of {unit} "
                 f"({count}), e.g. with .mean().")
    return (scaled(count, f"{quantity} is exactly {count} times too large: {too_large}"),
            scaled(1 / count, f"{quantity} is exactly 1/{count} of the expected value: it is "
                              f"averaged twice (divided by the number of {unit} twice)."))


def _pairs(Student: type, family: Family, cases: tuple[LossCase, ...], **options
           ) -> Iterator[tuple[LossCase, object, object, np.ndarray, np.ndarray]]:
    """For each case: the student's loss, the reference's, pred and target."""
    for case in cases:
        reduction = {} if case.reduction == "mean" else {"reduction": case.reduction}
        kwargs = dict(options, **reduction)
        student = construct(Student, **kwargs)
        check_instance(family.name, student)
        reference = family.reference(**{k: v.copy() if isinstance(v, np.ndarray) else v
                                        for k, v in kwargs.items()})
        pred, target = family.inputs(case)
        yield case, student, reference, pred, target


# ---------------------------------------------------------------------------- comparisons
def student_value(what: str, student, pred: np.ndarray, target: np.ndarray,
                  via_call: bool = False) -> np.ndarray:
    """The student's loss value as a 0-d array (it must be one number)."""
    given = pred.copy()
    shown = f"{what}(pred, target)" if via_call else f"{what}.forward"
    method = student if via_call else student.forward
    value = as_array(f"{shown} return value", call(shown, method, given, target.copy()))
    if not close(given, pred, 0, 0):
        fail(f"{what}.forward modified pred in place; compute new arrays instead.")
    if value.shape != ():
        fail(f"{shown} should return one number (a float), got an array of shape "
             f"{value.shape}. Reduce the per-element losses with .mean() (or .sum() for "
             "reduction='sum') and return float(...).")
    return value


def expect_value(family: Family, student, reference, pred: np.ndarray, target: np.ndarray,
                 case: LossCase, where: str = "", extra: Signatures = ()) -> None:
    """The student's loss value against the reference's."""
    got = student_value(family.name, student, pred, target)
    expected = reference.forward(pred.copy(), target.copy())
    expect_close(f"{family.name}.forward return value (the loss)", got, expected,
                 where or str(case), extra + family.signatures(case, pred, target, grad=False))


def _fd_verdict(what: str, student, pred: np.ndarray, target: np.ndarray, got: np.ndarray) -> str:
    """Whether the student's dL/dpred matches finite differences of their own forward."""
    probe = pred.copy()
    return fd_verdict(lambda: float(student.forward(probe, target.copy())), probe, got,
                      "Your backward", f": the loss formula in {what}.forward is wrong too; fix "
                      "it, then the gradient that follows from it.",
                      f": {what}.backward itself is wrong.", FD_NORM_FLOOR)


def student_grad(what: str, student, pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """dL/dpred from the student's backward(), after a forward on (pred, target)."""
    student_value(what, student, pred, target)
    try:
        grad = call(f"{what}.backward", student.backward)
    except CheckFailure as failure:
        hint = ("\n  A loss's backward() takes no argument: the loss is where the backward pass "
                "starts, and backward() returns dL/dpred."
                if "missing 1 required positional" in str(failure) else "")
        raise CheckFailure(str(failure) + hint) from None
    return as_array(f"{what}.backward() return value (dL/dpred)", grad)


def expect_grad(family: Family, student, reference, pred: np.ndarray, target: np.ndarray,
                case: LossCase, where: str = "", extra: Signatures = (), fd: bool = True) -> None:
    """The student's dL/dpred against the reference's; on failure, the finite-difference verdict."""
    got = student_grad(family.name, student, pred, target)
    reference.forward(pred.copy(), target.copy())
    signatures = extra + family.signatures(case, pred, target, grad=True)
    try:
        expect_close(f"{family.name}.backward(): dL/dpred", got, reference.backward(),
                     where or str(case), signatures)
    except CheckFailure as failure:
        verdict = _fd_verdict(family.name, student, pred, target, got) if fd else ""
        raise CheckFailure(str(failure) + verdict) from None


# ---------------------------------------------------------------------------- check bodies
def check_values(Student: type, family: Family, cases: tuple[LossCase, ...]) -> None:
    """The loss value on every case; and ``loss(pred, target)`` must equal forward."""
    for case, student, reference, pred, target in _pairs(Student, family, cases):
        expect_value(family, student, reference, pred, target, case)
    via_call = student_value(family.name, student, pred, target, via_call=True)
    via_forward = student_value(family.name, student, pred, target)
    if not close(via_call, via_forward):
        fail(f"{family.name}(pred, target) returned {float(via_call):.6g} but "
             f"{family.name}.forward(pred, target) returned {float(via_forward):.6g}: "
             "__call__ should return self.forward(pred, target).")


def check_grads(Student: type, family: Family, cases: tuple[LossCase, ...]) -> None:
    for case, student, reference, pred, target in _pairs(Student, family, cases):
        expect_grad(family, student, reference, pred, target, case)


def check_option(Student: type, family: Family, option: str, cases: tuple, hints: Callable) -> None:
    """Value and gradient with ``option=value`` for each ``(case, value)``;
    ``hints(case, pred, target, value, grad)`` gives the option's bug signatures."""
    for case, value in cases:
        for _, student, reference, pred, target in _pairs(Student, family, (case,),
                                                           **{option: value}):
            where = f"{case}, {option}={value}"
            for grad, expect in ((False, expect_value), (True, expect_grad)):
                expect(family, student, reference, pred, target, case, where,
                       hints(case, pred, target, value, grad))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Hide the overflow warnings an unstable submission prints; the failure says it all."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def check_stable(Student: type, family: Family, inputs: tuple) -> None:
    """Extreme inputs ``(where, pred, target, value_signatures, grad_signatures)``: the loss
    and dL/dpred must be finite and exact (no finite differences: the values are huge)."""
    for where, pred, target, value_signatures, grad_signatures in inputs:
        student, reference = construct(Student), family.reference()
        check_instance(family.name, student)
        case = LossCase(pred.shape)
        with _quiet():
            expect_value(family, student, reference, pred, target, case, where, value_signatures)
            expect_grad(family, student, reference, pred, target, case, where, grad_signatures,
                        fd=False)


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
    """p exactly 0 or 1: a finite loss (logs clamped at -100) and a finite gradient."""
    pred, target = BCE_EDGE
    student, reference = construct(BCELoss), ref.BCELoss()
    check_instance("BCELoss", student)
    case = LossCase(pred.shape)
    with _quiet():
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
    if not close(_signs(got[~inside]), _signs(expected[~inside]), 0, 0):
        fail(mismatch("BCELoss.backward(): dL/dpred where p is 0 or 1", got[~inside],
                      expected[~inside], BCE_EDGE_WHERE) +
             "\n  Where p equals y the gradient is 0; elsewhere it has the sign of p - y.")


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


POS_WEIGHT_CASES = ((LossCase((4, 3), 0), 3.0),
                    (LossCase((5, 3), 1, "sum"), np.array([0.5, 2.0, 4.0])),
                    (LossCase((1, 3), 2), np.array([4.0, 1.0, 0.25])))


def _pos_weight_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, weight: object,
                      grad: bool) -> Signatures:
    loss = ref.BCEWithLogitsLoss(reduction=case.reduction)
    unweighted = loss.forward(pred, target)
    unweighted = loss.backward() if grad else unweighted
    return (when("pos_weight_ignored", lambda got, expected: close(got, unweighted),
                 "the result equals the one without pos_weight: pos_weight is ignored. It "
                 "multiplies the positive examples' term: l = -[pos_weight y log sigmoid(x) "
                 "+ (1 - y) log(1 - sigmoid(x))], one weight per column when it is an array."),)


@check
def bce_with_logits_loss_pos_weight(BCEWithLogitsLoss):
    """pos_weight, a scalar or one weight per column, weighs the positive term (value and dL/dx)."""
    check_option(BCEWithLogitsLoss, BCE_LOGITS, "pos_weight", POS_WEIGHT_CASES, _pos_weight_hints)


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


@check
def bce_with_logits_loss_stability(BCEWithLogitsLoss):
    """Logits of magnitude 40 to 1000, both signs: exact, finite loss and gradient."""
    check_stable(BCEWithLogitsLoss, BCE_LOGITS, LOGITS_STABILITY)


# ---------------------------------------------------------------------------- CrossEntropyLoss
def _onehot(target: np.ndarray, classes: int) -> np.ndarray:
    return np.eye(classes)[target]


def _ce_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    if not grad:
        return ()
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
    )


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


@check
def cross_entropy_loss_stability(CrossEntropyLoss):
    """Logits of +-1000: the loss and dL/dz are finite and exact (log-sum-exp trick)."""
    check_stable(CrossEntropyLoss, CROSS_ENTROPY, CE_STABILITY)


SMOOTHING_CASES = ((LossCase((4, 3), 0), 0.1), (LossCase((5, 4), 1, "sum"), 0.3),
                   (LossCase((1, 5), 2), 0.2))


def _ce_with(pred: np.ndarray, q: np.ndarray, reduction: str, grad: bool) -> object:
    """Cross-entropy against the target distribution ``q``: the value or dL/dz."""
    log_probs = special.log_softmax(pred, axis=1)
    scale = 1 / len(pred) if reduction == "mean" else 1.0
    return scale * (np.exp(log_probs) - q) if grad else -scale * float((q * log_probs).sum())


def _smoothing_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, eps: float,
                     grad: bool) -> Signatures:
    onehot = _onehot(target, pred.shape[1])
    others = (1 - eps) * onehot + eps / (pred.shape[1] - 1) * (1 - onehot)
    ignored = _ce_with(pred, onehot, case.reduction, grad)
    spread = _ce_with(pred, others, case.reduction, grad)
    rule = "q = (1 - eps) onehot(y) + eps / C, loss -sum(q log_softmax(z)), dL/dz = softmax(z) - q"
    return (
        when("smoothing_ignored", lambda got, expected: close(got, ignored),
             "the result equals the one without smoothing: label_smoothing is ignored. "
             f"Use {rule}."),
        when("smoothing_c_minus_1", lambda got, expected: close(got, spread),
             "label smoothing spreads eps/(C-1) over the other classes; PyTorch spreads eps/C "
             f"over all C classes, the true one included: {rule}."),
    )


@check
def cross_entropy_loss_label_smoothing(CrossEntropyLoss):
    """label_smoothing=eps: target q = (1 - eps) onehot + eps / C (value and dL/dz)."""
    check_option(CrossEntropyLoss, CROSS_ENTROPY, "label_smoothing", SMOOTHING_CASES,
                 _smoothing_hints)


# ---------------------------------------------------------------------------- NLLLoss
def _nll_hints(case: LossCase, pred: np.ndarray, target: np.ndarray, grad: bool) -> Signatures:
    rule = ("dL/dpred is -1/N at each sample's target class, 0 elsewhere" if grad else
            "-pred[n, target[n]], not +log p (pred holds log-probabilities, which are <= 0, "
            "so the loss is >= 0)")
    return (sign_flipped(f"the sign is flipped: NLLLoss is the negative log-likelihood: {rule}."),)


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
