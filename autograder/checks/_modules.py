"""Shared steps of the module checks: build twins, compare forward, gradients, accumulation.

Every step runs the student's object and its ``minitorch_ref`` twin on the same
input with the same parameters and compares with ``expect_close``; failures of
a backward step also say whether the student's backward agrees with finite
differences of the student's own forward, which tells a forward bug from a
backward bug.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import minitorch_ref
from autograder.checks._calls import INPUT_CHANGED, expect_unchanged, placed
from autograder.checks._fd import fd_verdict
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close, mismatch
from course.testing.diagnose import Signature, close, scaled
from course.testing.failure import CheckFailure, expect, fail
from autograder.integrity import check_instance
from autograder.sandbox import call, construct


@dataclass(frozen=True)
class Case:
    """One input configuration: batch size, feature count, seed and value scale."""

    batch: int
    features: int
    seed: int = 0
    scale: float = 1.0

    def inputs(self, out_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``x`` of shape (batch, features) and an upstream gradient for the output."""
        rng = np.random.default_rng(self.seed)
        x = self.scale * rng.standard_normal((self.batch, self.features))
        grad = rng.standard_normal((self.batch, out_features or self.features))
        return x, grad

    def __str__(self) -> str:
        scale = f", values ~{self.scale:g}" if self.scale != 1 else ""
        return f"input of shape ({self.batch}, {self.features}){scale}"


# How messages write dL/d<parameter>.
SYMBOLS = {"weight": "W", "bias": "b"}

# Batch size 1, non-square shapes, several seeds.
CASES = (Case(4, 3, seed=0), Case(1, 5, seed=1), Case(7, 2, seed=2), Case(3, 6, seed=3))


def batch_signatures(n: int, quantity: str) -> tuple[Signature, ...]:
    """A gradient off by the batch size: averaged again, or the mean's 1/N lost."""
    if n == 1:
        return ()
    return (
        scaled(1 / n, f"{quantity} is exactly 1/N (N={n}) of the expected value: it is "
                      "averaged over the batch a second time. The loss's mean already "
                      "divides by N; layers just sum."),
        scaled(n, f"{quantity} is exactly N={n} times too large."),
    )


def twins(what: str, student_cls: type, ref_cls: type, *args, params: tuple[str, ...] = (),
          seed: int = 0, **kwargs):
    """The student's object and the reference's, with the reference's parameter values."""
    student = construct(student_cls, *args, **kwargs)
    minitorch_ref.manual_seed(seed)
    ref = ref_cls(*args, **kwargs)
    for name in params:
        copy_parameter(what, student, ref, name)
    check_instance(what, student)
    return student, ref


def copy_parameter(what: str, student: object, ref: object, name: str) -> None:
    """Give the student's ``name`` parameter the reference's values (shapes must agree)."""
    ref_param = getattr(ref, name)
    if ref_param is None:
        return
    param = getattr(student, name, None)
    data = getattr(param, "data", None)
    if param is None or data is None:
        fail(f"Your {what} has no parameter '{name}' with a .data array "
             f"(expected a Parameter of shape {ref_param.shape}).")
    data = as_array(f"{what}.{name}.data", data)
    if data.shape != ref_param.shape:
        hint = " It looks transposed." if data.shape == ref_param.shape[::-1] else ""
        fail(f"Your {what}.{name} has shape {data.shape}, expected {ref_param.shape}.{hint}")
    param.data = ref_param.data.copy()
    grad = getattr(param, "grad", None)
    if grad is None or asarray(grad).shape != ref_param.shape:
        fail(f"Your {what}.{name}.grad should be an array of zeros of shape {ref_param.shape} "
             f"after construction, got {None if grad is None else asarray(grad).shape}.")


def forward_pair(what: str, student, ref, x: np.ndarray,
                 in_place: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Both outputs; also fails, ``in_place``, if the student's forward changed its input in
    place (the forward cells judge that; the others leave it to them)."""
    given, read = placed(x, student)
    got = call(f"{what}.forward", student.forward, given)
    if in_place:
        expect_unchanged(x, read, INPUT_CHANGED.format(what))
    return as_array(f"{what}.forward output", got), ref.forward(x.copy())


def expect_forward(what: str, student, ref, x: np.ndarray, case: Case,
                   signatures: tuple[Signature, ...] = ()) -> None:
    got, expected = forward_pair(what, student, ref, x)
    expect_close(f"{what}.forward output", got, expected, str(case), signatures)
    if got.dtype != expected.dtype:
        fail(f"{what}.forward returned dtype {got.dtype} for a {x.dtype} input; keep the "
             f"input's dtype ({expected.dtype}).")


def _fd_verdict(what: str, student, x: np.ndarray, grad_output: np.ndarray,
                got: np.ndarray) -> str:
    """Whether the student's input gradient matches finite differences of their forward."""
    probe = x.copy()

    def loss() -> float:
        return float((asarray(student.forward(probe), dtype=float) * grad_output).sum())
    return fd_verdict(loss, probe, got, "Your backward", f", so the bug is in {what}.forward.",
                      f": {what}.backward itself is wrong.")


def expect_input_grad(what: str, student, ref, x: np.ndarray, grad_output: np.ndarray,
                      case: Case, signatures: tuple[Signature, ...] = (), fd: bool = True) -> None:
    """dL/dx of the student's backward against the reference's (after a forward on x; a
    forward that writes into x is the forward cell's to judge)."""
    forward_pair(what, student, ref, x, in_place=False)
    got = as_array(f"{what}.backward return value (dL/dx)",
                   call(f"{what}.backward", student.backward, grad_output.copy()))
    expected = ref.backward(grad_output.copy())
    signatures = signatures + batch_signatures(len(x), "dL/dx")
    try:
        expect_close(f"{what}.backward: grad_input (dL/dx)", got, expected, str(case), signatures)
    except CheckFailure as failure:
        verdict = _fd_verdict(what, student, x, grad_output, got) if fd else ""
        raise CheckFailure(str(failure) + verdict) from None


def expect_param_grads(what: str, student, ref, x: np.ndarray, grad_output: np.ndarray,
                       case: Case, signatures: dict[str, tuple[Signature, ...]]) -> None:
    """Each named parameter's .grad after one forward/backward, against the reference's."""
    forward_pair(what, student, ref, x)
    call(f"{what}.backward", student.backward, grad_output.copy())
    ref.backward(grad_output.copy())
    for name, sigs in signatures.items():
        ref_param = getattr(ref, name)
        if ref_param is not None:
            got = getattr(getattr(student, name), "grad", None)
            symbol = f"dL/d{SYMBOLS.get(name, name)}"
            sigs = sigs + batch_signatures(len(x), symbol)
            expect_close(f"{what}.{name}.grad ({symbol})", got, ref_param.grad, str(case), sigs)


def _one_pass(what: str, module, x: np.ndarray, grad_output: np.ndarray) -> None:
    given, _ = placed(x, module)
    call(f"{what}.forward", module.forward, given)
    call(f"{what}.backward", module.backward, grad_output.copy())


def _grad(what: str, module, name: str) -> np.ndarray:
    return as_array(f"{what}.{name}.grad", getattr(getattr(module, name), "grad", None))


def expect_accumulation(what: str, student, once, x: np.ndarray, grad_output: np.ndarray,
                        names: tuple[str, ...], fix_first: str, one_pass=_one_pass) -> None:
    """Two backward passes without zero_grad must add up, as in PyTorch: judged on the
    student's own gradients, so that a wrong gradient (``fix_first``'s cell) costs nothing
    here. ``once``, a twin of ``student`` with the same parameters, makes one pass;
    ``student`` makes two (each with ``one_pass``); each parameter's grad must then be twice
    ``once``'s."""
    one_pass(what, once, x, grad_output)
    for _ in range(2):
        one_pass(what, student, x, grad_output)
    for name in names:
        if getattr(once, name, None) is None:
            continue
        single, got = _grad(what, once, name), _grad(what, student, name)
        expect(not close(single, 0 * single, 0, 0),
               f"{what}.{name}.grad is still zero after a backward pass: no gradient was added, "
               f"so there is nothing to accumulate. Fix {fix_first} first.")
        if got.shape == single.shape and close(got, single):
            fail(f"{what}.{name}.grad after two backward passes equals one pass's gradient.\n"
                 "  Likely mistake: `=` instead of `+=`: gradients must accumulate until "
                 "zero_grad(), as in PyTorch.")
        if not (got.shape == single.shape and close(got, 2 * single)):
            fail(mismatch(f"{what}.{name}.grad after two backward passes", got, 2 * single,
                          "the same input twice: twice your own gradient of one pass"))
