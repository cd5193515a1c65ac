"""The machinery of the activation checks (ReLU, LeakyReLU, Sigmoid, Tanh, GELU, Softmax,
LogSoftmax) and of the shape modules (Identity, Flatten): inputs, families, check bodies.

Every class has a forward check (batch 1, a 3-d input, entries exactly 0 and up to
+-1000, float64 kept float64) and a backward check (dL/dx against the reference, with
the finite-difference verdict); the activations have a float32 check (output and dL/dx
stay float32, as in PyTorch), and ReLU and LeakyReLU an edge-case check of the gradient
at exactly 0 and below it. The ``*_signatures``
functions recognise the classic bugs of each class from the wrong array.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder import testimony
from autograder.checks._calls import warnings_explain
from autograder.checks._modules import expect_forward, expect_input_grad, forward_pair, twins
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, finite, when
from course.testing.failure import CheckFailure, fail


@dataclass(frozen=True)
class Input:
    """A test input: standard normal values (times ``scale``, plus ``offset``), or ``values``."""

    shape: tuple[int, ...]
    seed: int = 0
    scale: float = 1.0
    offset: float = 0.0
    values: tuple[float, ...] = ()
    dtype: str = "float64"
    note: str = ""

    def x(self) -> np.ndarray:
        if self.values:
            return np.array(self.values, dtype=self.dtype).reshape(self.shape)
        x = self.offset + self.scale * np.random.default_rng(self.seed).standard_normal(self.shape)
        return x.astype(self.dtype)

    def grad(self, shape: tuple[int, ...]) -> np.ndarray:
        """An upstream gradient dL/dY of the output's ``shape``."""
        return np.random.default_rng(self.seed + 1000).standard_normal(shape).astype(self.dtype)

    @property
    def plain(self) -> bool:
        """Standard normal values: no large, exact or shifted entries."""
        return not self.values and self.scale == 1 and not self.offset

    def __str__(self) -> str:
        parts = [f"input of shape {self.shape}", self.note,
                 self.dtype if self.dtype != "float64" else "",
                 f"values ~{self.scale:g}" if self.scale != 1 else "",
                 f"values near {self.offset:g}" if self.offset else ""]
        return ", ".join(part for part in parts if part)


BASIC = (Input((4, 3)), Input((1, 5), seed=1), Input((7, 2), seed=2), Input((2, 3, 4), seed=3))


EXTREME = Input((2, 5), values=(-1000, -50, -1, -1e-3, 1, 50, 1000, 1e-3, -20, 20),
                note="entries up to +-1000")


LARGE = (EXTREME, Input((3, 4), seed=4, scale=1e3), Input((3, 4), seed=5, offset=1e3))


ZEROS = Input((3, 4), values=(-2, 0, 1.5, -0.0, 0, 3, -1e-12, 1e-12, 0, -5, 2, 0),
              note="entries exactly 0")


FLOAT32 = Input((3, 4), seed=6, scale=3.0, dtype="float32")


FLOAT32_TOL = {"rtol": 1e-4, "atol": 1e-6}


Signatures = Callable[..., tuple[Signature, ...]]


def _none(*args) -> tuple[Signature, ...]:
    return ()


@dataclass(frozen=True)
class Family:
    """A class under test: its reference, constructor arguments with their inputs, and
    the signatures of its bugs, ``forward_signatures(x, kwargs)`` and
    ``backward_signatures(x, grad_output, kwargs)``; for a class whose forward must raise
    no overflow warning (the notebook's visible test turns one into an error), ``stable``
    says how to compute it without one."""

    name: str
    reference: type
    variants: tuple[tuple[dict, tuple[Input, ...]], ...]
    forward_signatures: Signatures = _none
    backward_signatures: Signatures = _none
    stable: str = ""


def reference_output(cls: type, kwargs: dict, x: np.ndarray, grad: np.ndarray | None = None):
    """The reference's output on ``x``, or its dL/dx for ``grad`` if given."""
    module = cls(**kwargs)
    y = module.forward(x.copy())
    return y if grad is None else module.backward(grad.copy())


def _twins(family: Family, cls: type, kwargs: dict, inputs: tuple[Input, ...]):
    """For each input: (name, input, student object, reference object, x)."""
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    what = f"{family.name}({shown})" if shown else family.name
    for inp in inputs:
        student, reference = twins(what, cls, family.reference, **kwargs)
        yield what, inp, student, reference, inp.x()


def check_forward(family: Family, cls: type, extra: tuple[Input, ...] = (ZEROS,)) -> None:
    """The output of every variant on its inputs (and ``extra``), in the input's dtype; a
    failure of a ``stable`` family also names the warnings the forward raised."""
    for kwargs, inputs in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, inputs + extra):
            with _explained(family, what, student, x):
                expect_forward(what, student, reference, x, inp,
                               family.forward_signatures(x, kwargs))


def _explained(family: Family, what: str, student, x: np.ndarray):
    """For a ``stable`` family, a failure's message gains the forward's warnings on ``x``."""
    if not family.stable:
        return contextlib.nullcontext()
    return warnings_explain(
        lambda: testimony.warnings_of(f"{what}.forward", student.forward, x.copy()), family.stable)


def check_backward(family: Family, cls: type, inputs: tuple[Input, ...] = (),
                   fd: bool = True) -> None:
    """dL/dx of every variant on its inputs (or on ``inputs``), against the reference's. An
    extreme input on which the student's forward is wrong (unstable at +-1000, say) is the
    forward cell's to judge: backward is judged on the others, the plain ones always."""
    for kwargs, default in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, inputs or default):
            if not inp.plain and not _forward_right(what, family, kwargs, student, x):
                continue
            grad = inp.grad(reference_output(family.reference, kwargs, x).shape)
            signatures = family.backward_signatures(x, grad, kwargs)
            expect_input_grad(what, student, reference, x, grad, inp, signatures, fd)


def check_backward_at_zero(family: Family, cls: type) -> None:
    """dL/dx where x is exactly 0 follows the negative side (PyTorch's convention for ReLU
    and LeakyReLU): against the reference's, or, when the student's backward is wrong on
    either side (the backward cell's mistake), against the student's own negative side, as
    long as the student's gradient has a kink at all."""
    for kwargs, _ in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, (ZEROS,)):
            grad = inp.grad(x.shape)
            try:
                expect_input_grad(what, student, reference, x, grad, inp,
                                  family.backward_signatures(x, grad, kwargs), fd=False)
            except CheckFailure as failure:
                _expect_own_kink(what, student, x, grad, failure)


def _expect_own_kink(what: str, student, x: np.ndarray, grad: np.ndarray,
                     failure: CheckFailure) -> None:
    """The student's dL/dx / grad_output at x = 0 equals their own on the negative side, where
    that is one value and differs from the positive side's; else ``failure`` stands."""
    call(f"{what}.forward", student.forward, x.copy())
    got = as_array(f"{what}.backward return value (dL/dx)",
                   call(f"{what}.backward", student.backward, grad.copy()), x.shape)
    slope = asarray(got, dtype=float) / grad
    below, above, zero = slope[x < 0], slope[x > 0], slope[x == 0]
    kink = (close(below, np.full_like(below, below[0])) and close(above, np.full_like(above, above[0]))
            and not close(below[:1], above[:1]))
    if not (kink and close(zero, np.full_like(zero, below[0]))):
        raise failure


def _forward_right(what: str, family: Family, kwargs: dict, student, x: np.ndarray) -> bool:
    got, expected = forward_pair(what, student, family.reference(**kwargs), x, in_place=False)
    return got.shape == expected.shape and close(got, expected)


def check_float32(family: Family, cls: type) -> None:
    """A float32 input: the output and dL/dx are right (to float32 precision) and float32. A
    dL/dx that is wrong in float64 too is the backward cell's to judge: then the float32 one
    is compared with the student's own float64 dL/dx, for its precision and dtype only."""
    for kwargs, _ in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, (FLOAT32,)):
            got, expected = forward_pair(what, student, reference, x, in_place=False)
            expect_close(f"{what}.forward output", got, expected, str(inp),
                         family.forward_signatures(x, kwargs), **FLOAT32_TOL)
            _expect_dtype(f"{what}.forward", got, x.dtype)
            grad = inp.grad(expected.shape)
            got = call(f"{what}.backward", student.backward, grad.copy())
            wanted, where = _float32_grad(family, cls, kwargs, reference, x, grad, what)
            got = expect_close(f"{what}.backward: grad_input (dL/dx)", got, wanted,
                               f"{inp}{where}", family.backward_signatures(x, grad, kwargs),
                               **FLOAT32_TOL)
            _expect_dtype(f"{what}.backward", got, x.dtype)


def _float32_grad(family: Family, cls: type, kwargs: dict, reference, x: np.ndarray,
                  grad: np.ndarray, what: str) -> tuple[np.ndarray, str]:
    """What the float32 dL/dx must equal: the reference's, or the student's own in float64
    when that is wrong (the backward cell's mistake)."""
    expected = reference.backward(grad.copy())
    x64, grad64 = x.astype(np.float64), grad.astype(np.float64)
    student64, reference64 = twins(what, cls, family.reference, **kwargs)
    forward_pair(what, student64, reference64, x64, in_place=False)
    got64 = as_array(f"{what}.backward (float64)", call(f"{what}.backward", student64.backward,
                                                        grad64.copy()))
    if got64.shape == expected.shape and not close(got64, reference64.backward(grad64.copy())):
        return got64, ", against your own float64 dL/dx (which is wrong: the backward cell)"
    return expected, ""


def _expect_dtype(what: str, got: np.ndarray, dtype: np.dtype) -> None:
    if got.dtype != dtype:
        fail(f"{what} returned dtype {got.dtype} for a {dtype} input; keep the input's dtype, "
             "as PyTorch does. A float64 value in the formula promotes the result: a numpy "
             "scalar such as np.sqrt(2) (use math.sqrt or a Python float), or an array made by "
             "np.zeros(shape), np.where(mask, 1.0, slope) or np.vectorize (cast it with "
             ".astype(x.dtype)).")


# --------------------------------------------------------------------------- Sigmoid, Tanh
def overflow(message: str) -> Signature:
    return when("overflow", lambda got, e: finite(e) and not finite(got), message)
