"""Checks of the gradient checker: numerical_gradient(f, x, h) and rel_error(a, b).

``numerical_gradient`` is run on functions whose gradient is known in closed form.
Central differences are accurate to about 1e-10 relative there, while one-sided
differences, (f(x + h) - f(x)) / h, are off by about 1e-5: the tolerance (1e-6
relative) tells them apart, and the message says which difference formula the
student's values match. ``f`` takes no argument and reads ``x``, so the checker
must perturb ``x`` in place, entry by entry, and restore it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, finite, scaled, when
from course.testing.failure import CheckFailure, expect, fail
from autograder.checks._calls import expect_value_error, placed
from autograder.remote.doubles import FUNCTIONS
from autograder.remote.proxy import Remote
from autograder.registry import check
from autograder.sandbox import call
from minitorch_ref import gradcheck as ref

H = 1e-5


@dataclass(frozen=True)
class Function:
    """A scalar function of an array (``doubles.FUNCTIONS[kind]`` with weights ``c``), with
    its gradient in closed form."""

    kind: str
    c: np.ndarray
    gradient: Callable[[np.ndarray], np.ndarray]

    @property
    def text(self) -> str:
        return FUNCTIONS[self.kind].__doc__

    def value(self, x: np.ndarray) -> float:
        return FUNCTIONS[self.kind](self.c, x)


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    return np.linspace(0.5, 2.0, int(np.prod(shape))).reshape(shape)


def cubic(shape: tuple[int, ...]) -> Function:
    c = _weights(shape)
    return Function("cubic", c, lambda x: 3 * c * x**2)


def coupled(shape: tuple[int, ...]) -> Function:
    c = _weights(shape)
    return Function("coupled", c, lambda x: np.cos((c * x).sum()) * c + 2 * x)


@dataclass(frozen=True)
class Case:
    function: Function
    x: np.ndarray

    @property
    def label(self) -> str:
        return (f"numerical_gradient(f, x, h={H:g}) with f = {self.function.text}, "
                f"x of shape {self.x.shape}")


def _cases(shapes: tuple[tuple[int, ...], ...], seed: int = 0, scale: float = 1.0) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [Case(make(shape), scale * rng.standard_normal(shape))
            for shape in shapes for make in (cubic, coupled)]


# ----------------------------------------------------------------------------- running
@dataclass
class Outcome:
    got: np.ndarray
    expected: np.ndarray
    x_restored: bool


def handed(numerical_gradient: Callable, case: Case) -> tuple[object, object, Callable]:
    """``f`` and ``x`` for the student's numerical_gradient, and a reader of what ``x`` holds
    afterwards. ``f()`` reads ``x`` when called; graded from outside, both are made in the
    student's kernel (a double, an array kept there), as that is where the student's code
    perturbs ``x`` and calls ``f``."""
    x, read = placed(case.x, numerical_gradient)
    if isinstance(numerical_gradient, Remote):
        session = numerical_gradient._session
        return session.send("double", "function", case.function.kind, case.function.c, x), x, read
    return (lambda: case.function.value(x)), x, read


def run_case(numerical_gradient: Callable, case: Case) -> Outcome:
    """The student's gradient on ``case``, and whether x was restored."""
    got, restored = _student_gradient(numerical_gradient, case)
    return Outcome(got, case.function.gradient(case.x), restored)


def _student_gradient(numerical_gradient: Callable, case: Case) -> tuple[np.ndarray, bool]:
    f, x, read = handed(numerical_gradient, case)
    result = call(case.label, numerical_gradient, f, x, H)
    return as_array(f"{case.label}: the result", result), _restored(read(), case.x)


def _restored(x: np.ndarray, original: np.ndarray) -> bool:
    """Exactly, bit for bit: x + h - h is not always x in floating point."""
    return close(x, original, 0, 0)


def _one_sided(case: Case, sign: float) -> np.ndarray:
    """(f(x + sign*h e_i) - f(x)) / (sign*h), entry by entry."""
    x, grad = case.x.copy(), np.zeros_like(case.x)
    base = case.function.value(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + sign * H
        grad[i] = (case.function.value(x) - base) / (sign * H)
        x[i] = saved
    return grad


def accuracy_signatures(case: Case, outcome: Outcome) -> tuple[Signature, ...]:
    one_sided = [_one_sided(case, 1.0), _one_sided(case, -1.0)]
    return (
        when("one_sided", lambda g, e: any(close(g, d, rtol=1e-7) for d in one_sided),
             "a one-sided difference, (f(x + h) - f(x)) / h: its error is O(h), about 1e-5 "
             "here. Use the central difference (f(x + h) - f(x - h)) / (2h), error O(h^2)."),
        scaled(2.0, "the gradient is exactly twice too large: divide by 2h, the distance "
                    "between x + h and x - h."),
        when("copy_perturbed", lambda g, e: not bool(g.any()),
             "the gradient is all zeros: f() reads x itself, so perturb x in place "
             "(x[i] = saved + h), not a copy of it."),
        when("not_restored", lambda g, e: not outcome.x_restored,
             "x was not restored after perturbing it, so later entries were differentiated "
             "at the wrong point: put x[i] back to its saved value after the two f() calls."),
    )


# ----------------------------------------------------------------------------- numerical_gradient
@check
def numerical_gradient_accuracy(numerical_gradient):
    """Central differences: within 1e-6 relative of the true gradient, values ~1 and ~10 (a
    function of all the entries together only where x is restored: leaving x changed is
    numerical_gradient_restores_x's mistake, which a function of each entry alone ignores)."""
    for case in _cases(((5,), (1,))) + _cases(((4,),), seed=1, scale=10.0):
        outcome = run_case(numerical_gradient, case)
        if not outcome.x_restored and case.function.kind == "coupled":
            continue
        expect_close(f"{case.label}: the gradient", outcome.got, outcome.expected,
                     signatures=accuracy_signatures(case, outcome))


@check
def numerical_gradient_restores_x(numerical_gradient):
    """After the call, x holds exactly its original values (each entry restored)."""
    for case in _cases(((4,), (2, 3)), seed=2):
        f, given, read = handed(numerical_gradient, case)
        call(case.label, numerical_gradient, f, given, H)
        x = read()
        if _restored(x, case.x):
            continue
        moved = (x - case.x).__abs__()
        by_h = moved[moved > 0]
        rounding = close(x, case.x, rtol=1e-12, atol=1e-15)
        hint = ("entries are left at x + h or x - h: after the two f() calls put x[i] back to "
                "its saved value." if close(by_h, np.full_like(by_h, H), rtol=1e-3) else
                "x[i] was put back by arithmetic (adding h back), which is off by rounding: "
                "keep the original value in a variable and assign it back, as the text says."
                if rounding else
                "keep the original value of x[i] in a variable and put it back afterwards.")
        digits = ".17g" if rounding else ".6g"
        fail(f"{case.label} changed x: it must be left exactly as it was.\n"
             f"  x before [{', '.join(f'{v:{digits}}' for v in case.x.ravel()[:3])}, ...]\n"
             f"  x after  [{', '.join(f'{v:{digits}}' for v in x.ravel()[:3])}, ...]\n"
             f"  Likely mistake: x was not restored: {hint}")


def _first_axis_only(expected: np.ndarray) -> np.ndarray:
    """What perturbing whole slices x[i] (a loop over len(x)) gives for separable f."""
    axes = tuple(range(1, expected.ndim))
    return np.broadcast_to(expected.sum(axis=axes, keepdims=True), expected.shape)


@check
def numerical_gradient_nd(numerical_gradient):
    """Every entry of 2-D and 3-D arrays is perturbed; the gradient has x's shape (judged
    against the student's own gradient of the same entries laid out flat when the formula is
    wrong: numerical_gradient_accuracy's part)."""
    for case in _cases(((3, 4), (2, 3, 2), (1, 5)), seed=3):
        outcome = run_case(numerical_gradient, case)
        rows = _first_axis_only(outcome.expected)
        signatures = (
            when("first_axis", lambda g, e: case.function.text.startswith("sum(c")
                 and close(g, rows),
                 "only the first axis is looped over, so x[i] is a whole row. Visit every "
                 "entry: for i in np.ndindex(x.shape), or np.nditer with multi_index."),
            when("flat", lambda g, e: g.size == e.size and g.shape != e.shape
                 and close(g.reshape(e.shape), e),
                 "the values are right but the shape is not: return the gradient with x's "
                 "shape (start from np.zeros_like(x))."),
        ) + accuracy_signatures(case, outcome)
        try:
            expect_close(f"{case.label}: the gradient", outcome.got, outcome.expected,
                         signatures=signatures)
        except CheckFailure:
            if not _as_flat(numerical_gradient, case, outcome.got):
                raise


def _as_flat(numerical_gradient: Callable, case: Case, got: np.ndarray) -> bool:
    """Whether ``got`` is what the student's own numerical_gradient gives for the same entries
    laid out flat (1-D, numerical_gradient_accuracy's ground): then every entry was visited,
    and a wrong formula is the accuracy cell's mistake."""
    flat = Case(Function(case.function.kind, case.function.c.ravel(), case.function.gradient),
                case.x.ravel())
    try:
        own, _ = _student_gradient(numerical_gradient, flat)
    except CheckFailure:
        return False
    return got.shape == case.x.shape and own.size == got.size and bool(own.any()) \
        and close(got.ravel(), own)


# ----------------------------------------------------------------------------- rel_error
def _rel_error_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3))
    v = np.array([1.0, 2.0, 3.0])
    return [("a, a", v, v.copy()), ("a, -a", v, -v),
            ("a, zeros", np.array([3.0, 4.0]), np.zeros(2)),
            ("[1, 2, 3], [1, 2, 4]", v, np.array([1.0, 2.0, 4.0])),
            ("a, a + noise (2-D)", a, a + 1e-3 * rng.standard_normal((2, 3))),
            ("a + noise, a (2-D)", a + 1e-3, a), ("zeros, zeros", np.zeros(3), np.zeros(3))]


def rel_error_signatures(a: np.ndarray, b: np.ndarray) -> tuple[Signature, ...]:
    diff = np.abs(a - b)
    elementwise = float((diff / np.maximum(1e-8, np.abs(a) + np.abs(b))).max())
    norm_a = float(np.linalg.norm(a))
    by_first = float(np.linalg.norm(a - b)) / norm_a if norm_a else None
    return (
        when("elementwise", lambda g, e: close(g, elementwise),
             "that is the largest elementwise relative error. rel_error compares whole "
             "arrays: ||a - b|| / (||a|| + ||b||), with the Euclidean norm of all entries."),
        when("one_norm", lambda g, e: by_first is not None and close(g, by_first),
             "divided by ||a|| only; divide by ||a|| + ||b|| (symmetric, at most 1)."),
        when("nan", lambda g, e: not finite(g),
             "rel_error of two zero arrays must be 0: guard the division "
             "(divide by max(||a|| + ||b||, a tiny floor))."),
    )


@check
def rel_error_values(rel_error):
    """rel_error(a, b) = ||a - b|| / (||a|| + ||b||): 0 if equal, 1 for a and -a, 0 for zeros;
    a Python float; arrays of different shapes raise a ValueError naming both."""
    for text, a, b in _rel_error_cases():
        what = f"rel_error({text})"
        result = call(what, rel_error, a.copy(), b.copy())
        got = as_array(what, result)
        expect(got.size == 1, f"{what} should be one number, got an array of shape {got.shape}.")
        expect_close(what, got.reshape(()), ref.rel_error(a, b),
                     signatures=rel_error_signatures(a, b))
        expect(isinstance(result, float), f"{what} returned {type(result).__name__}; return a "
               "Python float, float(...), as the text asks.")
    v = np.arange(1.0, 4.0)
    expect_value_error("rel_error of arrays of shapes (3,) and (3, 1)", rel_error, v, v[:, None],
                       naming=("(3,)", "(3, 1)"), fix="Compare the shapes first: numpy would "
                       "broadcast them to (3, 3) and give a meaningless number.")
