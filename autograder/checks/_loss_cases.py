"""The machinery of the loss checks: cases, families, comparisons of the value and dL/dpred.

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

from autograder import testimony
from autograder.checks._calls import expect_unchanged, placed, warnings_explain
from autograder.checks._fd import fd_verdict
from autograder.integrity import check_instance
from autograder.sandbox import call, construct
from course.testing.compare import as_array, expect_close, mismatch
from course.testing.diagnose import Signature, close, scaled
from course.testing.failure import CheckFailure, fail
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


def _pairs(Student: type, family: Family, cases: tuple[LossCase, ...]
           ) -> Iterator[tuple[LossCase, object, object, np.ndarray, np.ndarray]]:
    """For each case: the student's loss, the reference's, pred and target."""
    for case in cases:
        kwargs = {} if case.reduction == "mean" else {"reduction": case.reduction}
        student = construct(Student, **kwargs)
        check_instance(family.name, student)
        reference = family.reference(**kwargs)
        pred, target = family.inputs(case)
        yield case, student, reference, pred, target


# ---------------------------------------------------------------------------- comparisons
def student_value(what: str, student, pred: np.ndarray, target: np.ndarray,
                  via_call: bool = False) -> np.ndarray:
    """The student's loss value as a 0-d array (it must be one number)."""
    given, read = placed(pred, student)
    shown = f"{what}(pred, target)" if via_call else f"{what}.forward"
    method = student if via_call else student.forward
    value = as_array(f"{shown} return value", call(shown, method, given, target.copy()))
    expect_unchanged(pred, read, f"{what}.forward modified pred in place; compute new arrays "
                     "instead.")
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


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Hide the overflow warnings an unstable submission prints; the failure says it all."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def check_stable(Student: type, family: Family, inputs: tuple, fix: str,
                 invariant: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
    """Extreme inputs ``(where, pred, target, value_signatures, grad_signatures)``: the loss
    and dL/dpred must be finite and exact (no finite differences: the values are huge); a
    failure also names the warnings forward and backward raised, and ``fix`` says how.

    Stability is judged against the reference only when the plain values are right (the
    forward and backward cells). When they are not, a loss whose values do not change under
    ``invariant`` (a transformation of pred they must not depend on) is judged by that: its
    values at an extreme input must equal its own at the transformed input, so that a wrong
    formula costs the forward and backward cells, not this one too."""
    plain = None if invariant is None else _plain_right(Student, family, inputs[0][2])
    for where, pred, target, value_signatures, grad_signatures in inputs:
        student, reference = construct(Student), family.reference()
        check_instance(family.name, student)
        case = LossCase(pred.shape)
        with quiet(), warnings_explain(lambda: _warnings(family, student, pred, target), fix):
            if plain is not None:
                _expect_invariant(family, student, pred, target, where, invariant, plain)
                continue
            expect_value(family, student, reference, pred, target, case, where, value_signatures)
            expect_grad(family, student, reference, pred, target, case, where, grad_signatures,
                        fd=False)


def _plain_right(Student: type, family: Family, target: np.ndarray) -> str | None:
    """None if the student's loss and gradient are right on plain inputs of the family (a
    batch of the stability inputs' size); else what is wrong, for the message."""
    case = LossCase((len(target), 3), seed=11)
    try:
        for _, student, reference, pred, target in _pairs(Student, family, (case,)):
            expect_value(family, student, reference, pred, target, case)
            expect_grad(family, student, reference, pred, target, case, fd=False)
    except CheckFailure:
        return (f"{family.name}'s plain values are wrong too ({case}): its forward and "
                "backward cells fail. Fix them first; stability is judged here on your own "
                "formula meanwhile.")
    return None


INVARIANT = ("{name} gives other values for {where} than for the same pred shifted by its "
             "rows' maxima, which {what} cannot depend on: the formula is not stable.")


def _expect_invariant(family: Family, student, pred: np.ndarray, target: np.ndarray,
                      where: str, invariant: Callable[[np.ndarray], np.ndarray], plain: str) -> None:
    """The student's loss and dL/dpred at ``pred`` equal their own at ``invariant(pred)``,
    and the loss depends on pred at all (a constant is invariant under anything)."""
    moved = pred.copy()
    moved[np.arange(len(target)), target] += 1.0
    values = [student_value(family.name, student, p, target) for p in (pred, invariant(pred))]
    if close(values[0], student_value(family.name, student, moved, target)):
        fail(f"{family.name} returns the same loss when the true class's logit changes: it does "
             f"not depend on pred as a loss must, so its stability cannot be judged. {plain}")
    grads = [student_grad(family.name, student, p, target) for p in (pred, invariant(pred))]
    for what, got, expected in (("the loss", *values), ("dL/dpred", *grads)):
        if got.shape != expected.shape or not close(got, expected):
            fail(mismatch(f"{family.name}: {what}", got, expected, f"{where}, against your own "
                          "at the shifted pred")
                 + "\n  " + INVARIANT.format(name=family.name, where=where, what=what)
                 + f"\n  {plain}")


def _warnings(family: Family, student, pred: np.ndarray, target: np.ndarray) -> list[str]:
    """The floating-point warnings of the student's forward on (pred, target), then backward."""
    return (testimony.warnings_of(f"{family.name}.forward", student.forward, pred.copy(),
                                  target.copy())
            + testimony.warnings_of(f"{family.name}.backward", student.backward))
