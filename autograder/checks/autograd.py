"""Checks of the student's autograd engine, the bonus unit: one ``Tensor`` class, graded
through the expressions it computes.

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

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

import minitorch_ref
from autograder.checks._fd import fd_verdict
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close, mismatch
from course.testing.diagnose import Signature, close, scaled, transposed, when
from course.testing.failure import CheckFailure, fail
from minitorch_ref import nn as manual
from minitorch_ref.autograd import Tensor as ReferenceTensor
from minitorch_ref.autograd.functions import unbroadcast
from minitorch_ref.autograd.graph import topological_order

Mistake = tuple[np.ndarray, str]  # what a classic mistake gives, and its explanation


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
    if not isinstance(out, Tensor):
        if type(out).__name__ == Tensor.__name__:
            fail(f"{case.text} returned a {type(out).__name__} of another class than the one "
                 "graded (an older definition?): run the cell that defines Tensor, then the "
                 "cells after it, again.")
        fail(f"{case.text} returned a {type(out).__name__}, expected a Tensor: every operation "
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
        when(f"mistake{i}", lambda g, e, c=c: _same(g, c), message)
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


def _same(got: np.ndarray, candidate: np.ndarray) -> bool:
    candidate = asarray(candidate, dtype=float)
    return got.shape == candidate.shape and close(got, candidate)


def check_case(Tensor: type, case: Case, seed: int = 0,
               extra: Callable[[str, Expected], tuple[Signature, ...]] | None = None) -> None:
    """Value, then every input's gradient after one backward pass."""
    expected = case.expected(seed)
    leaves, out = compute(Tensor, case)
    expect_value(case, out, expected)
    run_backward(case, out, expected)
    for name, leaf in leaves.items():
        expect_grad(Tensor, case, name, leaf, expected,
                    extra=(lambda n=name: extra(n, expected)) if extra else None)


def check_cases(Tensor: type, cases: list[Case]) -> None:
    for seed, case in enumerate(cases):
        check_case(Tensor, case, seed)


# ============================================================================ the mistakes
def _g(e: Expected, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(G, x)``: the upstream gradient and the input's values, for a unary case."""
    return e.G, e.inputs[name]


def _to(grad: np.ndarray, e: Expected, name: str) -> np.ndarray:
    """``grad`` summed to input ``name``'s shape (so a bug shows even under broadcasting)."""
    return unbroadcast(np.broadcast_to(grad, np.shape(e.value)), e.inputs[name].shape)


def mul_mistakes(name: str, e: Expected) -> list[Mistake]:
    return [(_to(e.G * e.inputs[name], e, name),
             f"{name} received G * {name}; each factor receives G times the OTHER factor "
             "(for c = a * b: dL/da = G * b, dL/db = G * a).")]


def div_mistakes(name: str, e: Expected) -> list[Mistake]:
    a, b, G = e.inputs["a"], e.inputs["b"], e.G
    if name == "a":
        return [(_to(G * b, e, "a"), "d(a / b)/da = 1 / b: divide G by b.")]
    return [(_to(-G / b**2, e, "b"), "d(a / b)/db = -a / b**2: the factor a is missing."),
            (_to(-G * a / b, e, "b"), "d(a / b)/db = -a / b**2: divide by b squared.")]


def power_mistakes(p: float) -> Callable[[str, Expected], list[Mistake]]:
    def mistakes(name: str, e: Expected) -> list[Mistake]:
        G, x = _g(e, name)
        return [(G * p * x**p, f"d(x**p)/dx = p * x**(p - 1): lower the exponent by 1 "
                               f"(here {p:g} * x**{p - 1:g})."),
                (G * x ** (p - 1), "d(x**p)/dx = p * x**(p - 1): the factor p is missing.")]
    return mistakes


def exp_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G * x, "d exp(x)/dx = exp(x): multiply G by the output exp(x), not by x.")]


def log_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G / np.log(x), "d log(x)/dx = 1/x: divide by the input x, not by the output "
                            "log(x)."),
            (G * np.log(x), "d log(x)/dx = 1/x: divide G by x.")]


def relu_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G * (x >= 0), "relu'(0) is 0, as in PyTorch: the mask is x > 0, not x >= 0."),
            (G * np.maximum(x, 0), "multiplied by the output relu(x); the derivative is the "
                                   "mask x > 0 (1 or 0).")]


def tanh_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G * (1 - x**2), "d tanh(x)/dx = 1 - tanh(x)**2: square the output y = tanh(x), "
                             "not the input x."),
            (G * (1 - np.tanh(x)), "d tanh(x)/dx = 1 - tanh(x)**2: square tanh(x).")]


def sigmoid_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    s = 0.5 * (1 + np.tanh(x / 2))  # sigmoid(x), without overflow
    return [(G * x * (1 - x), "d sigmoid(x)/dx = s (1 - s) with s = sigmoid(x), the output, "
                              "not the input x."),
            (G * s, "d sigmoid(x)/dx = s (1 - s): the factor (1 - s) is missing.")]


def matmul_mistakes(name: str, e: Expected) -> list[Mistake]:
    A, B, G = e.inputs["A"], e.inputs["B"], e.G
    if name == "A" and G.shape[1] == B.shape[0]:
        return [(G @ B, "dL/dA = G @ B.T: transpose B.")]
    if name == "B" and A.shape[1] == G.shape[0]:
        return [(A @ G, "dL/dB = A.T @ G: transpose A.")]
    return []


def matmul_signatures(name: str, e: Expected) -> tuple[Signature, ...]:
    formula = "dL/dA = G @ B.T, of A's shape" if name == "A" else "dL/dB = A.T @ G, of B's shape"
    return (transposed(f"dL/d{name} looks transposed: for C = A @ B, {formula}."),)


def sum_mistakes(name: str, e: Expected) -> list[Mistake]:
    """G broadcast back without putting the summed axes back first."""
    G, x = _g(e, name)
    try:
        return [(np.broadcast_to(G, x.shape),
                 "G was broadcast back along the wrong axis: put the summed axes back first "
                 "(np.expand_dims, or reshape G to the keepdims shape), then broadcast it to "
                 "the input's shape.")]
    except ValueError:
        return []


def mean_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    n = x.size // max(np.size(e.value), 1)
    return [(e.grads[name] * n, f"every entry should receive G / n, with n = {n} entries "
                                "averaged: the 1/n is missing (the mean's backward is the sum's, "
                                "divided by n).")] + sum_mistakes(name, e)


def transpose_mistakes(axes: tuple[int, ...] | None) -> Callable[[str, Expected], list[Mistake]]:
    def mistakes(name: str, e: Expected) -> list[Mistake]:
        G = e.G
        found = [(G, "the gradient of a transpose is G transposed back to the input's "
                     "layout; it was passed on unchanged.")]
        if axes is not None:
            found.append((np.transpose(G, axes),
                          f"transpose's backward applies the inverse permutation, "
                          f"np.argsort(axes) = {tuple(int(i) for i in np.argsort(axes))}, "
                          "not axes again."))
        return found
    return mistakes


# ============================================================================ the cases
def _arithmetic() -> list[Case]:
    a, b, p = randn(3, 4, seed=0), randn(3, 4, seed=1), positive(3, 4, seed=2)
    row = positive(1, 5, seed=3)
    return [
        Case("c = a + b", lambda a, b: a + b, {"a": a, "b": b}),
        Case("c = a - b", lambda a, b: a - b, {"a": a, "b": b}),
        Case("c = a * b", lambda a, b: a * b, {"a": a, "b": b}, mul_mistakes),
        Case("c = a / b", lambda a, b: a / b, {"a": a, "b": p}, div_mistakes),
        Case("c = -a", lambda a: -a, {"a": a}),
        Case("c = a ** 2", lambda a: a**2, {"a": a}, power_mistakes(2)),
        Case("c = a ** 3", lambda a: a**3, {"a": b}, power_mistakes(3)),
        Case("c = a ** 0.5", lambda a: a**0.5, {"a": p}, power_mistakes(0.5)),
        Case("c = a ** -1.5", lambda a: a**-1.5, {"a": row}, power_mistakes(-1.5)),
        Case("e = 2 * a - 1 / (b + 3) + c / 4 - (1 - d)",
             lambda a, b, c, d: 2 * a - 1 / (b + 3) + c / 4 - (1 - d),
             {"a": row, "b": positive(1, 5, seed=4), "c": randn(1, 5, seed=5),
              "d": randn(1, 5, seed=6)}),
    ]


def _functions() -> list[Case]:
    x = randn(3, 4, seed=4)
    with_zeros = randn(3, 4, seed=5)
    with_zeros[0, :2] = 0.0
    return [
        Case("y = x.exp()", lambda x: x.exp(), {"x": x}, exp_mistakes),
        Case("y = x.log()", lambda x: x.log(), {"x": positive(3, 4, seed=6)}, log_mistakes),
        Case("y = x.relu()", lambda x: x.relu(), {"x": with_zeros}, relu_mistakes),
        Case("y = x.tanh()", lambda x: x.tanh(), {"x": randn(3, 4, seed=7, scale=2)},
             tanh_mistakes),
        Case("y = x.sigmoid()", lambda x: x.sigmoid(), {"x": randn(3, 4, seed=8, scale=3)},
             sigmoid_mistakes),
        Case("y = x.sigmoid()", lambda x: x.sigmoid(), {"x": randn(1, 5, seed=9, scale=20)},
             sigmoid_mistakes),
        Case("y = x.tanh()", lambda x: x.tanh(), {"x": randn(1, 5, seed=10, scale=0.5)},
             tanh_mistakes),
    ]


def _matmul() -> list[Case]:
    shapes = (((4, 3), (3, 2)), ((1, 5), (5, 3)), ((3, 3), (3, 3)), ((2, 4), (4, 1)))
    return [Case("C = A @ B", lambda A, B: A @ B,
                 {"A": randn(*sa, seed=2 * i), "B": randn(*sb, seed=2 * i + 1)}, matmul_mistakes)
            for i, (sa, sb) in enumerate(shapes)]


KEEPDIMS = "keepdims=True keeps every reduced axis, with size 1."


def _reductions() -> list[Case]:
    def case(text, fn, shape, mistakes=sum_mistakes, seed=0):
        return Case(text, fn, {"x": randn(*shape, seed=seed)}, mistakes, KEEPDIMS)
    return [
        case("s = x.sum()", lambda x: x.sum(), (2, 3)),
        case("s = x.sum(axis=0)", lambda x: x.sum(axis=0), (2, 3), seed=1),
        case("s = x.sum(axis=1)", lambda x: x.sum(axis=1), (3, 3), seed=2),
        case("s = x.sum(axis=-1, keepdims=True)", lambda x: x.sum(axis=-1, keepdims=True),
             (2, 3), seed=3),
        case("s = x.sum(axis=(0, 2))", lambda x: x.sum(axis=(0, 2)), (2, 3, 4), seed=4),
        case("s = x.sum(axis=0)", lambda x: x.sum(axis=0), (1, 4), seed=5),
        case("m = x.mean()", lambda x: x.mean(), (2, 3), mean_mistakes, seed=6),
        case("m = x.mean(axis=0)", lambda x: x.mean(axis=0), (4, 3), mean_mistakes, seed=7),
        case("m = x.mean(axis=1)", lambda x: x.mean(axis=1), (3, 3), mean_mistakes, seed=8),
        case("m = x.mean(axis=1, keepdims=True)", lambda x: x.mean(axis=1, keepdims=True),
             (2, 5), mean_mistakes, seed=9),
        case("m = x.mean(axis=(0, 2), keepdims=True)",
             lambda x: x.mean(axis=(0, 2), keepdims=True), (2, 3, 4), mean_mistakes, seed=10),
    ]


def _shapes() -> list[Case]:
    x, cube = randn(2, 3, seed=11), randn(2, 3, 4, seed=12)
    return [
        Case("y = x.reshape(3, 2)", lambda x: x.reshape(3, 2), {"x": x}),
        Case("y = x.reshape((-1,))", lambda x: x.reshape((-1,)), {"x": x}),
        Case("y = x.reshape(4, 1, 3)", lambda x: x.reshape(4, 1, 3), {"x": randn(2, 6, seed=13)}),
        Case("y = x.T", lambda x: x.T, {"x": x}, transpose_mistakes(None)),
        Case("y = x.transpose((1, 2, 0))", lambda x: x.transpose((1, 2, 0)), {"x": cube},
             transpose_mistakes((1, 2, 0))),
        Case("y = x.transpose()", lambda x: x.transpose(), {"x": cube}, transpose_mistakes(None)),
        Case("y = a.reshape(3, 2).T @ b.T", lambda a, b: a.reshape(3, 2).T @ b.T,
             {"a": randn(2, 3, seed=14), "b": randn(4, 3, seed=15)}),
    ]


def _broadcasting() -> list[Case]:
    def case(text, fn, a, b, mistakes=None):
        return Case(text, fn, {"a": a, "b": b}, mistakes)
    return [
        case("c = a + b", lambda a, b: a + b, randn(3, 1, seed=20), randn(1, 4, seed=21)),
        case("c = a + b", lambda a, b: a + b, randn(2, 3, seed=22), randn(3, seed=23)),
        case("c = a * b", lambda a, b: a * b, randn(2, 3, seed=24), randn(seed=25),
             mul_mistakes),
        case("c = a - b", lambda a, b: a - b, randn(4, seed=26), randn(2, 3, 4, seed=27)),
        case("c = a * b", lambda a, b: a * b, randn(2, 1, 4, seed=28), randn(3, 1, seed=29),
             mul_mistakes),
        case("c = a / b", lambda a, b: a / b, randn(2, 3, seed=30), positive(2, 1, seed=31),
             div_mistakes),
        Case("Y = X @ W + b", lambda X, W, b: X @ W + b,
             {"X": randn(5, 3, seed=32), "W": randn(3, 2, seed=33), "b": randn(2, seed=34)}),
        Case("d = (a ** 2) * b - c", lambda a, b, c: (a**2) * b - c,
             {"a": randn(1, 3, seed=35), "b": randn(4, 1, seed=36), "c": randn(3, seed=37)}),
    ]


# ============================================================================ the checks: operations
@check
def tensor_arithmetic(Tensor):
    """``+ - * / **`` and unary ``-``: values and gradients, numbers on either side."""
    check_cases(Tensor, _arithmetic())


@check
def tensor_elementwise_functions(Tensor):
    """``exp log relu tanh sigmoid``: values and gradients (relu'(0) = 0, inputs up to ~60)."""
    check_cases(Tensor, _functions())


@check
def tensor_matmul(Tensor):
    """``A @ B``: value, dL/dA = G @ B.T and dL/dB = A.T @ G, on non-square and square shapes."""
    for seed, case in enumerate(_matmul()):
        check_case(Tensor, case, seed, extra=matmul_signatures)


@check
def tensor_reductions(Tensor):
    """``sum`` and ``mean`` over all axes, one axis, negative and tuple axes, with keepdims."""
    check_cases(Tensor, _reductions())


@check
def tensor_reshape_transpose(Tensor):
    """``reshape`` (sizes or a tuple, -1), ``.T`` and ``transpose(axes)``: values and gradients."""
    check_cases(Tensor, _shapes())


@check
def tensor_broadcasting(Tensor):
    """Binary operations on broadcast shapes: each input's gradient is summed back to its shape."""
    check_cases(Tensor, _broadcasting())


# ============================================================================ engine bugs, simulated
# What a backward pass computes on the reference's graph when nodes pass their gradients on
# in a given order, combining what a tensor receives with a given rule; the classic engine
# bugs are a wrong order or a wrong rule.
REVISITED = (
    "a node was visited more than once: your topological order lists a tensor each time it "
    "is reached (no `visited` set), so its backward rule runs several times and sends its "
    "gradient again. Mark each tensor as visited and list it once."
)
COUNTED_ONCE = (
    "a tensor used several times received only one of its gradients (the gradient was "
    "counted once): add up (+=) the gradients that every use sends, never assign."
)
OUT_OF_ORDER = (
    "a tensor passed its gradient on before all its uses had sent theirs: process the nodes "
    "in reverse topological order (each tensor after every tensor computed from it)."
)


def _reverse_topological(root) -> list:
    return topological_order(root)[::-1]


def _with_repeats(root) -> list:
    """Depth-first post-order with no visited set (a node once per path), root first."""
    order, stack = [], [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        stack.append((node, True))
        stack.extend((p, False) for p in reversed(node.parents) if p.requires_grad)
    return order[::-1]


def _breadth_first(root) -> list:
    order, seen, queue = [], {id(root)}, deque([root])
    while queue:
        node = queue.popleft()
        order.append(node)
        for parent in node.parents:
            if parent.requires_grad and id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    return order


def _add(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    return old + new


def _keep_last(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    return new


def _send(root, seed: np.ndarray, order: list, combine: Callable,
          start: dict | None = None) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Pass the gradients on in ``order``; ``id(tensor) ->`` the gradient it received in
    all, and the gradient it held when its turn came (what an engine that reads a tensor's
    gradient only then, from a dict, gives it)."""
    received, at_turn = dict(start or {}), {}
    received[id(root)] = seed
    for node in order:
        grad = received.get(id(node))
        if grad is None:
            continue
        at_turn[id(node)] = grad
        if node.grad_fn is None:
            continue
        for parent, g in zip(node.parents, node.grad_fn.backward(grad)):
            if parent.requires_grad and g is not None:
                key = id(parent)
                received[key] = combine(received[key], g) if key in received else np.array(g)
    return received, at_turn


def engine_mistakes(root, G: np.ndarray, leaf) -> list[Mistake]:
    """What leaf ``leaf`` receives from the classic engine bugs, with their explanations."""
    found = []
    for order, combine, message in ((_with_repeats, _add, REVISITED),
                                    (_reverse_topological, _keep_last, COUNTED_ONCE),
                                    (_breadth_first, _add, OUT_OF_ORDER)):
        for grads in _send(root, G, order(root), combine):
            if id(leaf) in grads:
                found.append((grads[id(leaf)], message))
    return found


def stale_second_pass(root, G: np.ndarray, leaf) -> np.ndarray | None:
    """A leaf's gradient after two passes of micrograd's engine: the intermediate tensors
    keep the gradients of the first pass and the second adds to them and sends them on."""
    order = _reverse_topological(root)
    first, _ = _send(root, G, order, _add)
    return _send(root, G, order, _add, start=first)[0].get(id(leaf))


# ============================================================================ the checks: the engine
def _reused() -> list[Case]:
    def ladder(x):
        for _ in range(6):
            x = x * 0.5 + x.tanh()
        return x
    return [
        Case("y = x * x", lambda x: x * x, {"x": randn(3, seed=40)}),
        Case("y = h * h + h, with h = x * 3", lambda x: (lambda h: h * h + h)(x * 3),
             {"x": randn(2, 3, seed=41)}),
        Case("y = (x * 2).tanh() * x + x", lambda x: (x * 2).tanh() * x + x,
             {"x": randn(2, 3, seed=42)}),
        Case("z = (a * b).tanh() * a - b.sigmoid() * b",
             lambda a, b: (a * b).tanh() * a - b.sigmoid() * b,
             {"a": randn(2, 3, seed=43), "b": randn(2, 3, seed=44)}),
        Case("y = h, after h = h * 0.5 + h.tanh() six times from h = x", ladder,
             {"x": randn(4, seed=45)}),
    ]


@check
def tensor_reused_nodes(Tensor):
    """Tensors used several times (x * x, diamonds, a ladder of diamonds): every use adds its
    gradient, and each node passes its gradient on once, in reverse topological order."""
    for seed, case in enumerate(_reused()):
        check_case(Tensor, case, seed)


def _twice() -> list[Case]:
    return [
        Case("c = (a * 2) * 3", lambda a: (a * 2) * 3, {"a": np.array(2.0)}),
        Case("y = ((x * 3).tanh() * w).sum()", lambda x, w: ((x * 3).tanh() * w).sum(),
             {"x": randn(2, seed=50), "w": randn(2, seed=55)}),
        Case("y = (x @ W + b).tanh() @ V", lambda x, W, b, V: (x @ W + b).tanh() @ V,
             {"x": randn(3, 2, seed=51), "W": randn(2, 4, seed=52), "b": randn(4, seed=53),
              "V": randn(4, 1, seed=54)}),
    ]


def twice_signatures(name: str, once: Expected) -> tuple[Signature, ...]:
    stale = stale_second_pass(once.root, once.G, once.leaves[name])
    return (
        when("assigned", lambda g, _: _same(g, once.grads[name]),
             "after two backward() calls the gradient equals one call's: the leaves' .grad "
             "must accumulate (+=) over backward calls until you reset them, as in PyTorch. "
             "Do not overwrite (or zero) the leaves' gradients inside backward()."),
        when("stale", lambda g, _: stale is not None and _same(g, stale),
             "the second backward() sent again the gradients that the first one left in the "
             "intermediate tensors (micrograd's bug): start every backward pass with fresh "
             "(zero) gradients for the intermediate tensors, or keep them in a dict local to "
             "backward(); only the leaves accumulate."),
    )


@check
def tensor_backward_twice(Tensor):
    """Calling ``backward`` twice on the same graph adds the same gradients once more, exactly as
    PyTorch does (micrograd's engine, which keeps intermediate gradients, adds too much)."""
    for seed, case in enumerate(_twice()):
        check_case(Tensor, case, seed)
        once, twice = case.expected(seed), case.expected(seed)
        twice.root.backward(twice.upstream)  # the reference's second pass
        doubled = replace(once, grads={n: t.grad for n, t in twice.leaves.items()})
        leaves, out = compute(Tensor, case)
        for _ in range(2):
            run_backward(case, out, once)
        for name, leaf in leaves.items():
            expect_grad(Tensor, case, name, leaf, doubled, "after two backward() calls",
                        lambda n=name: twice_signatures(n, once), fd=False)


DEPTH, WIDTH, FACTOR = 2500, 1000, 1.0005
RECURSION_HINT = (
    f"\n  Likely mistake: the topological order (or the backward pass) is built by recursion, "
    f"one Python call per node, and a chain of {DEPTH} operations goes deeper than Python's "
    "recursion limit (1000). Use a loop with an explicit stack (a list you append to and pop "
    "from) instead of recursion; do not raise the limit."
)


def _deep_backward(what: str, out) -> None:
    try:
        with np.errstate(all="ignore"):  # a wrong rule overflows; the comparison says so
            call(what, out.backward)
    except CheckFailure as failure:
        if "RecursionError" in str(failure):
            raise CheckFailure(str(failure) + RECURSION_HINT) from None
        raise


@check
def tensor_deep_graph(Tensor):
    """A chain of 2,500 operations (no RecursionError) and a tensor used 1,000 times (each node
    visited once): the engine is iterative and linear in the size of the graph."""
    x = make_leaf(Tensor, "x", np.array(1.0))
    y = x
    for _ in range(DEPTH):
        y = call(f"y = y * {FACTOR} (a chain of {DEPTH})", lambda t: t * FACTOR, y)
    _deep_backward(f"y.backward() at the end of a chain of {DEPTH} multiplications", y)
    expect_close(f"x.grad after a chain of {DEPTH} multiplications y = y * {FACTOR}",
                 getattr(x, "grad", None), np.array(FACTOR**DEPTH), "x a scalar")
    x = make_leaf(Tensor, "x", np.array(1.5))
    total = x
    for _ in range(WIDTH):
        total = call(f"total = total + x ({WIDTH} times)", lambda t: t + x, total)
    _deep_backward(f"total.backward() for total = x + x + ... ({WIDTH + 1} terms)", total)
    expect_close(f"x.grad for total = x + x + ... + x ({WIDTH + 1} terms)",
                 getattr(x, "grad", None), np.array(WIDTH + 1.0), "x a scalar",
                 (scaled(1 / (WIDTH + 1), "only one use of x counted: add the gradient of "
                                          "every use (+=)."),))


# ============================================================================ the MLP
@dataclass(frozen=True)
class MLP:
    """A small MLP of ``minitorch_ref.nn`` layers and its loss, to rebuild with Tensors."""

    sizes: tuple[int, ...]
    hidden: str             # "relu" or "tanh"
    sigmoid_output: bool
    loss: str               # "cross-entropy" or "MSE"
    batch: int
    seed: int

    @property
    def text(self) -> str:
        head = " with a sigmoid output" if self.sigmoid_output else ""
        return (f"L = the {self.loss} loss of the {'-'.join(map(str, self.sizes))} "
                f"{self.hidden} MLP{head}")

    def manual(self) -> tuple[manual.Sequential, object]:
        """The network of the earlier units (same seed, same weights) and its criterion."""
        minitorch_ref.manual_seed(self.seed)
        layers: list = []
        for i, (n_in, n_out) in enumerate(zip(self.sizes, self.sizes[1:])):
            layers.append(manual.Linear(n_in, n_out))
            if i < len(self.sizes) - 2:
                layers.append(manual.ReLU() if self.hidden == "relu" else manual.Tanh())
        if self.sigmoid_output:
            layers.append(manual.Sigmoid())
        criterion = manual.CrossEntropyLoss() if self.loss == "cross-entropy" else manual.MSELoss()
        return manual.Sequential(*layers), criterion

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed + 1)
        X = rng.standard_normal((self.batch, self.sizes[0]))
        if self.loss == "cross-entropy":
            return X, rng.integers(0, self.sizes[-1], self.batch)
        return X, rng.uniform(0, 1, (self.batch, self.sizes[-1]))


def mlp_forward(mlp: MLP, X: np.ndarray, y: np.ndarray) -> Callable:
    """The loss as a function of W1, b1, W2, b2, ...: Tensor operations only."""
    def loss(*params):
        h = type(params[0])(X)
        layers = list(zip(params[::2], params[1::2]))
        for i, (W, b) in enumerate(layers):
            h = h @ W + b
            if i < len(layers) - 1:
                h = h.relu() if mlp.hidden == "relu" else h.tanh()
        if mlp.sigmoid_output:
            h = h.sigmoid()
        if mlp.loss == "MSE":
            return ((h - y) ** 2).mean()
        scores = asarray(h.data, dtype=float)
        shifted = h - scores.max(axis=1, keepdims=True)
        one_hot = np.eye(mlp.sizes[-1])[y]
        return (shifted.exp().sum(axis=1).log() - (shifted * one_hot).sum(axis=1)).mean()
    return loss


@dataclass(frozen=True)
class MLPCase(Case):
    """The MLP's loss as a Case, whose expected values are the manual backward pass's."""

    mlp: MLP | None = None

    @property
    def where(self) -> str:
        return (f"a batch X of shape ({self.mlp.batch}, {self.mlp.sizes[0]}), the weights of "
                "the manual network of the earlier units")

    def expected(self, seed: int = 0) -> Expected:
        """The manual backward pass's loss and gradients (and the reference Tensor's graph,
        for the engine's mistakes)."""
        model, criterion = self.mlp.manual()
        X, y = self.mlp.data()
        value = criterion(model(X), y)
        model.backward(criterion.backward())
        grads = dict(zip(self.inputs, (p.grad for p in model.parameters())))
        graph = super().expected(seed)
        return replace(graph, value=np.array(value), grads=grads)


def mlp_case(mlp: MLP) -> MLPCase:
    model, _ = mlp.manual()
    names = [f"{kind}{i}" for i in range(1, len(mlp.sizes)) for kind in ("W", "b")]
    inputs = {n: p.data.copy() for n, p in zip(names, model.parameters())}
    return MLPCase(mlp.text, mlp_forward(mlp, *mlp.data()), inputs, mlp=mlp)


MLPS = (MLP((2, 16, 16, 3), "relu", False, "cross-entropy", 6, seed=0),
        MLP((2, 16, 16, 3), "relu", False, "cross-entropy", 1, seed=1),
        MLP((3, 8, 1), "tanh", True, "MSE", 5, seed=2))


@check
def tensor_mlp(Tensor):
    """The MLP of the earlier units built from Tensor operations (``X @ W + b``, relu or tanh,
    sigmoid, cross-entropy from exp/log/sum/mean, MSE): the loss and every parameter's gradient
    equal the manual backward passes' of ``minitorch_ref.nn`` for the same weights."""
    for mlp in MLPS:
        check_case(Tensor, mlp_case(mlp))
