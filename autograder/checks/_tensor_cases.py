"""The machinery of the autograd checks (the bonus unit's Tensor): cases, expected values,
comparisons with the mistakes each gradient can show.

The student's API is ``minitorch_ref.autograd.Tensor``'s: ``Tensor(data,
requires_grad=False)``, ``.data`` (an array), ``.grad`` (an array of the tensor's shape
once a backward pass has reached it), ``.backward(grad=None)`` (no argument for a
one-element result), ``+ - * / ** @`` with Tensors or numbers on either side and arrays
on the right, unary ``-``, ``exp log relu tanh sigmoid``, ``sum(axis=None,
keepdims=False)``, ``mean(...)``, ``reshape(*shape)``, ``transpose(axes=None)`` and ``.T``.

Every check computes the same expression twice, on the student's Tensors and on the
reference's, holding the same arrays; compares the values; calls ``backward`` on both
(with a random upstream gradient ``G`` when the result has several elements); and
compares every input's ``.grad``. A wrong gradient is also compared with finite
differences of the student's own forward, which tells a forward bug from a backward
bug, and with what the classic mistakes give (a gradient not summed over broadcast axes,
tanh' from the input, a node visited twice, micrograd's second backward...), so that the
message names the mistake. The MLP check takes its expected gradients from the manual
backward passes of ``minitorch_ref.nn`` instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from autograder.checks._calls import is_instance, type_name
from autograder.checks._engine_mistakes import Mistake, engine_mistakes
from autograder.checks._fd import fd_verdict
from autograder.checks._tensor_replay import replay
from autograder.integrity import check_instance
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close, mismatch
from course.testing.diagnose import Signature, close, close_or_nan, when
from course.testing.failure import CheckFailure, fail
from minitorch_ref.autograd import Tensor as ReferenceTensor
from minitorch_ref.autograd.functions import unbroadcast


# ============================================================================ inputs
def randn(*shape: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """Standard normal values (times ``scale``), none within 1e-3 of 0 (ReLU's kink)."""
    x = scale * np.random.default_rng(seed).standard_normal(shape)
    return np.where(np.abs(x) < 1e-3, 1e-3, x)


def positive(*shape: int, seed: int = 0) -> np.ndarray:
    """Values in [0.5, 2): safe for log, division and fractional powers."""
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


# ============================================================================ one expression
@dataclass
class Expected:
    """The reference's result of a case: value, upstream gradient, input gradients."""

    inputs: dict[str, np.ndarray]
    value: np.ndarray
    upstream: np.ndarray | None  # None: backward() without argument (one-element result)
    grads: dict[str, np.ndarray]
    root: object = None  # the reference's result Tensor (its graph), if any
    leaves: dict[str, object] = field(default_factory=dict)

    @property
    def G(self) -> np.ndarray:
        return np.ones(np.shape(self.value)) if self.upstream is None else self.upstream


@dataclass(frozen=True)
class Case:
    """An expression of Tensors, the arrays it is computed on, and the mistakes worth naming.

    ``fn`` takes one Tensor per input, in order, and works on any Tensor class;
    ``mistakes(name, expected)`` lists what classic bugs give for input ``name``.
    """

    text: str
    fn: Callable
    inputs: dict[str, np.ndarray]
    mistakes: Callable[[str, Expected], list[Mistake]] | None = None
    value_hint: str = ""

    @property
    def result(self) -> str:
        return self.text.split(" = ")[0] if " = " in self.text else "the result"

    @property
    def where(self) -> str:
        return ", ".join(f"{name} of shape {a.shape}" for name, a in self.inputs.items())

    def expected(self, seed: int = 0) -> Expected:
        leaves = {n: ReferenceTensor(a.copy(), requires_grad=True) for n, a in self.inputs.items()}
        out = self.fn(*leaves.values())
        upstream = None if out.size == 1 and out.ndim == 0 else upstream_gradient(out.shape, seed)
        out.backward(upstream)
        return Expected(self.inputs, out.data, upstream,
                        {n: t.grad for n, t in leaves.items()}, out, leaves)


def upstream_gradient(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed + 1000).standard_normal(shape)


def make_leaf(Tensor: type, name: str, array: np.ndarray):
    """The student's ``Tensor(array, requires_grad=True)`` (on a copy the check keeps)."""
    leaf = call(f"Tensor(<{name}: array of shape {array.shape}>, requires_grad=True)",
                Tensor, array.copy(), requires_grad=True)
    check_instance("Tensor", leaf)
    return leaf


def compute(Tensor: type, case: Case) -> tuple[dict[str, object], object]:
    """The student's leaves and result; fails unless the result is one of their Tensors."""
    leaves = {name: make_leaf(Tensor, name, a) for name, a in case.inputs.items()}
    out = call(f"computing {case.text} ({case.where})", case.fn, *leaves.values())
    if not is_instance(out, Tensor):
        if type_name(out) == Tensor.__name__:
            fail(f"{case.text} returned a {type_name(out)} of another class than the one "
                 "graded (an older definition?): run the cell that defines Tensor, then the "
                 "cells after it, again.")
        fail(f"{case.text} returned a {type_name(out)}, expected a Tensor: every operation "
             "must wrap its result in a new Tensor that remembers its parents.")
    return leaves, out


def value_signatures(hint: str) -> tuple[Signature, ...]:
    return (when("shape", lambda g, e: g.shape != e.shape and g.size == e.size
                 and close(g.reshape(e.shape), e),
                 "the values are right but the shape is not." + (f" {hint}" if hint else "")),)


def expect_value(case: Case, out, expected: Expected) -> None:
    expect_close(f"the value of {case.text}", getattr(out, "data", None), expected.value,
                 case.where, value_signatures(case.value_hint))


def run_backward(case: Case, out, expected: Expected) -> None:
    """``backward()`` for a one-element result, else ``backward(G)``."""
    if expected.upstream is None:
        call(f"{case.result}.backward() for {case.text}", out.backward)
    else:
        call(f"{case.result}.backward(G) for {case.text}", out.backward, expected.upstream.copy())


# ============================================================================ comparing gradients
def broadcast_signatures() -> tuple[Signature, ...]:
    """A gradient left in the broadcast shape, or summed without keeping the axes of size 1."""
    def sums_back(g: np.ndarray, e: np.ndarray) -> bool:
        try:
            return g.size > e.size and close(unbroadcast(g, e.shape), e)
        except (ValueError, IndexError):
            return False

    return (
        when("size_one", lambda g, e: g.ndim == e.ndim and sums_back(g, e),
             "the gradient was not summed over the broadcast dimensions: it has the shape of "
             "the result. Where the input has axes of size 1 that broadcasting stretched, sum "
             "the gradient over them with keepdims=True (your unbroadcast)."),
        when("leading", lambda g, e: g.ndim > e.ndim and sums_back(g, e),
             "the gradient was not summed over the broadcast dimensions: it has the shape of "
             "the result. Sum over the leading axes the input lacks (and over the axes where it "
             "has size 1, keeping them): your unbroadcast(grad, input_shape)."),
        when("kept", lambda g, e: g.shape != e.shape and g.size == e.size
             and close(g.reshape(e.shape), e),
             "the values are right but the gradient does not have the input's shape: a "
             "gradient always has the shape of what it differentiates (keep the axes of size 1 "
             "with keepdims=True; reshape a reshape's gradient back)."),
    )


def student_loss(Tensor: type, case: Case, arrays: dict[str, np.ndarray],
                 G: np.ndarray) -> Callable[[], float]:
    """``sum(G * fn(inputs))`` computed by the student's forward on the current ``arrays``."""
    def loss() -> float:
        out = case.fn(*(Tensor(a) for a in arrays.values()))
        return float((asarray(out.data, dtype=float) * G).sum())
    return loss


def expect_grad(Tensor: type, case: Case, name: str, leaf, expected: Expected,
                when_: str = "", extra: Callable[[], tuple[Signature, ...]] | None = None,
                fd: bool = True) -> None:
    """``leaf.grad`` against the expected gradient; on a mismatch, the message names the
    mistake when one applies (``extra()`` adds signatures, computed only then) and says
    whether the gradient agrees with finite differences of the student's forward."""
    what = f"{name}.grad (dL/d{name}) for {case.text}" + (f" {when_}" if when_ else "")
    grad = getattr(leaf, "grad", None)
    if grad is None:
        fail(f"{what} is None after backward(): no gradient reached {name}. Does your backward "
             f"visit every tensor {case.result} was computed from, and store the gradient of "
             "the leaves (requires_grad=True) in .grad?")
    got, wanted = as_array(what, grad), expected.grads[name]
    if got.shape == wanted.shape and close(got, wanted):
        return
    mistakes = case.mistakes(name, expected) if case.mistakes else []
    if expected.root is not None:
        mistakes += engine_mistakes(expected.root, expected.G, expected.leaves[name])
    signatures = (extra() if extra else ()) + tuple(
        when(f"mistake{i}", lambda g, e, c=c: same(g, c), message)
        for i, (c, message) in enumerate(mistakes)) + broadcast_signatures()
    where = f"{case.where}; " + ("backward()" if expected.upstream is None
                                 else "backward(G) with a random G")
    message = mismatch(what, got, wanted, where, signatures)
    if fd:
        arrays = {n: a.copy() for n, a in case.inputs.items()}
        message += fd_verdict(student_loss(Tensor, case, arrays, expected.G), arrays[name],
                              asarray(got, dtype=float), f"Your {name}.grad",
                              ", so the bug is in a forward computation.",
                              ": a backward rule (or the engine) is wrong.")
    fail(message)


def same(got: np.ndarray | None, candidate: np.ndarray) -> bool:
    """``got`` (a gradient, None if none reached) equals ``candidate``, NaN where it is NaN."""
    return got is not None and close_or_nan(got, candidate)


def check_case(Tensor: type, case: Case, seed: int = 0,
               extra: Callable[[str, Expected], tuple[Signature, ...]] | None = None,
               own: str = "") -> None:
    """Value, then every input's gradient after one backward pass. ``own`` names what a cell
    judges that is not the rules of the operations, which it then takes as the student's own:
    "engine" (``replay``), or "broadcasting" (``_own_broadcast``)."""
    expected = case.expected(seed)
    leaves, out = compute(Tensor, case)
    expect_value(case, out, expected)
    run_backward(case, out, expected)
    found = None
    for name, leaf in leaves.items():
        try:
            expect_grad(Tensor, case, name, leaf, expected,
                        extra=(lambda n=name: extra(n, expected)) if extra else None)
        except CheckFailure:
            if not own:
                raise
            if found is None:
                found = (_own_rules(out, expected, leaves) if own == "engine"
                         else _own_broadcast(Tensor, case, expected))
            if found is None or not same(getattr(leaf, "grad", None), found[name]):
                raise


def _own_broadcast(Tensor: type, case: Case, expected: Expected) -> dict | None:
    """The gradients the student's own rules give with every broadcast input stretched to the
    result's shape first (no broadcasting in the operations), summed back to each input's
    shape here: what right broadcasting makes of those rules. None if they give nothing."""
    shape = np.shape(expected.value)

    def stretched(a: np.ndarray) -> np.ndarray:
        try:
            return np.broadcast_to(a, shape).copy() if np.broadcast_shapes(a.shape, shape) \
                == shape else a
        except ValueError:
            return a
    full = replace(case, inputs={n: stretched(a) for n, a in case.inputs.items()})
    try:
        leaves, out = compute(Tensor, full)
        run_backward(full, out, expected)
        grads = {n: unbroadcast(as_array(n, getattr(leaf, "grad", None)), case.inputs[n].shape)
                 for n, leaf in leaves.items()}
    except (CheckFailure, ValueError):
        return None
    return grads if any(bool((g != 0).any()) for g in grads.values()) else None


def _own_rules(out, expected: Expected, leaves: dict) -> dict[str, np.ndarray] | None:
    """The leaves' gradients by the student's own backward rules through a right engine, when
    those rules give something (not all zeros): the engine is judged, the rules are the
    operation cells'. None when that cannot be worked out."""
    try:
        own = replay(out, expected.G, leaves)
    except CheckFailure:
        return None
    if not any(g.size and bool((g != 0).any()) for g in own.values()):
        return None
    return own


def check_cases(Tensor: type, cases: list[Case]) -> None:
    for seed, case in enumerate(cases):
        check_case(Tensor, case, seed)
